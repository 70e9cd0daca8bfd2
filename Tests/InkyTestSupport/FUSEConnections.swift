import Foundation
import InkyCore
import XCTest

/// The kernel's FUSE control folder (fusectl): each connection's requests `waiting` and its
/// `abort`. systemd mounts it at boot; a machine without systemd (a container, a fresh runner)
/// may not have it, and a test watching for a request waiting in the daemon then saw none and
/// failed at its deadline, and a hang deadline could not abort. Mounted here when it is not and
/// this user may; a test that needs it skips with the reason otherwise.
public enum FUSEConnections {
    public static let folder = "/sys/fs/fuse/connections"

    /// Mounts fusectl on `folder` if it is not mounted; throws XCTSkip when it cannot be.
    public static func ensure() throws {
        if isMounted { return }
        if geteuid() == 0 { _ = try? CommandRunner.capture("/bin/mount", ["-t", "fusectl", "fusectl", folder]) }
        guard isMounted else {
            throw XCTSkip("the FUSE control folder \(folder) is not mounted (fusectl) and this user cannot mount it")
        }
    }

    static var isMounted: Bool {
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        return mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 2 && fields[1] == folder && fields[2] == "fusectl"
        }
    }

    /// The connection's number of the inkyfs mount at `mountpoint`, from the mount table (it
    /// answers even when the mount does not).
    public static func connection(of mountpoint: String) -> UInt64? {
        InkyfsMount.current().first { $0.mountpoint == mountpoint }?.connection
    }

    /// Requests of the connection the kernel has sent or queued and not yet had answered.
    public static func waiting(_ connection: UInt64) -> Int {
        let text = (try? String(contentsOfFile: "\(folder)/\(connection)/waiting", encoding: .utf8)) ?? ""
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Ends every request of the connection with ENOTCONN, even one the daemon never answers.
    public static func abort(_ connection: UInt64) {
        try? "1".write(toFile: "\(folder)/\(connection)/abort", atomically: false, encoding: .utf8)
    }
}

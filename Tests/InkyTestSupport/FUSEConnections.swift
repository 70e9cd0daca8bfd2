import Foundation
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

    /// The connection's number: the minor of the mount's device. Nil when a stat of the
    /// mountpoint does not answer (take it while it does).
    public static func connection(of mountpoint: String) -> UInt? {
        var info = stat()
        guard stat(mountpoint, &info) == 0 else { return nil }
        return UInt((info.st_dev & 0xff) | ((info.st_dev >> 12) & 0xfff00))
    }

    /// Requests of the connection the kernel has sent or queued and not yet had answered.
    public static func waiting(_ connection: UInt) -> Int {
        let text = (try? String(contentsOfFile: "\(folder)/\(connection)/waiting", encoding: .utf8)) ?? ""
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Ends every request of the connection with ENOTCONN, even one the daemon never answers.
    public static func abort(_ connection: UInt) {
        try? "1".write(toFile: "\(folder)/\(connection)/abort", atomically: false, encoding: .utf8)
    }
}

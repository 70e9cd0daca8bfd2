import Foundation
import InkyCore

/// Checks made before mounting, each failure with the fix, because a FUSE mount that fails
/// half-way leaves the user with libfuse's terse messages or, worse, a stale mountpoint.
public enum MountPreflight {
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public let message: String
        public let fix: String
        public var description: String { "\(message)\n  fix: \(fix)" }
    }

    public struct Environment: Sendable {
        public var fuseDevice = "/dev/fuse"
        public var fusermount = "fusermount3"
        public init() {}
    }

    /// `force` clears a stale mount left by a killed daemon. `allowNonEmpty` is `-o nonempty`.
    /// `reservedNames`: names of virtual top-level folders (with the option that renames them),
    /// which a real folder of the library must not also use.
    public static func check(library: String, mountpoint: String, allowNonEmpty: Bool, force: Bool,
                             reservedNames: [(name: String, option: String)] = [],
                             daemonPID: (String) -> Int32? = { _ in nil }, note: (String) -> Void = { _ in },
                             environment: Environment = Environment()) throws(Problem) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: library, isDirectory: &isDirectory) else {
            throw Problem(message: "library \(library) does not exist", fix: "give the folder of your comics (or one comic file)")
        }
        if isDirectory.boolValue {
            for reserved in reservedNames where FileManager.default.fileExists(atPath: library + "/" + reserved.name) {
                throw Problem(message: "the library has its own '\(reserved.name)', the name of a folder inkyfs adds",
                              fix: "rename one of them: \(reserved.option)")
            }
        }
        var info = stat()
        if !isLive(mountpoint, &info) {
            if errno == ENOTCONN {
                if force {
                    _ = try? runFusermount(environment.fusermount, ["-u", "-z", mountpoint])
                    if stat(mountpoint, &info) != 0 {
                        throw Problem(message: "\(mountpoint) is still a dead mount after unmounting it", fix: "run: fusermount3 -u -z \(mountpoint)")
                    }
                    note("cleared the stale mount on \(mountpoint) left by a daemon that died (--force)")
                } else {
                    throw Problem(message: "\(mountpoint): Transport endpoint is not connected (a previous mount's daemon died)",
                                  fix: "run: fusermount3 -u -z \(mountpoint)   (or mount again with --force)")
                }
            } else {
                throw Problem(message: "mountpoint \(mountpoint) does not exist", fix: "create it: mkdir -p \(mountpoint)")
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw Problem(message: "mountpoint \(mountpoint) is not a directory", fix: "mount on an empty directory")
        }
        let realLibrary = resolved(library), realMountpoint = resolved(mountpoint)
        if let live = InkyfsMount.current().last(where: { $0.mountpoint == realMountpoint }) {
            // Checked before emptiness: -o nonempty would stack a second daemon on the first.
            let pid = daemonPID(mountpoint).map { " (pid \($0))" } ?? ""
            throw Problem(message: "\(mountpoint) is already an inkyfs mount of \(live.library)\(pid)",
                          fix: "unmount it with `inkyfs unmount \(mountpoint)`, or mount on another empty directory")
        }
        if isWithin(realMountpoint, realLibrary) {
            // The daemon would list its own mount while answering for it, and wait on itself.
            throw Problem(message: "mountpoint \(mountpoint) is inside the library \(library): inkyfs would read its own mount",
                          fix: "mount on an empty directory outside the library, e.g. mkdir -p ~/mnt/comics")
        }
        if isWithin(realLibrary, realMountpoint) {
            throw Problem(message: "the library \(library) is inside the mountpoint \(mountpoint): the mount would hide it",
                          fix: "mount on an empty directory outside the library")
        }
        if !allowNonEmpty, let entries = try? FileManager.default.contentsOfDirectory(atPath: mountpoint), !entries.isEmpty {
            throw Problem(message: "mountpoint \(mountpoint) is not empty", fix: "use an empty directory, or add -o nonempty to mount over it")
        }
        let device = FUSEHealth.device(environment.fuseDevice)
        if device.status == .failed { throw Problem(message: device.detail, fix: "run: " + (device.fix ?? "")) }
        if getuid() != 0, findExecutable(environment.fusermount) == nil {
            throw Problem(message: "\(environment.fusermount) not found: unprivileged FUSE mounts need it",
                          fix: "install it: sudo apt-get install fuse3")
        }
    }

    /// The path with every link and `..` resolved (mountinfo's spelling), itself if it cannot be.
    public static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// Whether `path` is `folder` or below it (both resolved).
    static func isWithin(_ path: String, _ folder: String) -> Bool {
        path == folder || folder == "/" || path.hasPrefix(folder + "/")
    }

    /// stat alone can succeed on the mount of a killed daemon: the kernel answers it from cached
    /// attributes (the tree timeout). statvfs is never cached, so it meets the dead connection
    /// (ENOTCONN). False leaves the reason in errno (ENOTCONN for a dead mount).
    private static func isLive(_ mountpoint: String, _ info: inout stat) -> Bool {
        guard stat(mountpoint, &info) == 0 else { return false }
        var filesystem = statvfs()
        return statvfs(mountpoint, &filesystem) == 0 || errno != ENOTCONN
    }

    /// A mount whose daemon died: what preflight refuses and doctor reports.
    public static func isDeadMount(_ path: String) -> Bool {
        var info = stat()
        return !isLive(path, &info) && errno == ENOTCONN
    }

    public static func findExecutable(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs fusermount3 (unmount, lazy unmount); returns its stderr on failure.
    @discardableResult
    public static func runFusermount(_ fusermount: String = "fusermount3", _ arguments: [String]) throws(Problem) -> Int32 {
        guard let executable = findExecutable(fusermount) else {
            throw Problem(message: "\(fusermount) not found", fix: "install it: sudo apt-get install fuse3")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        do { try process.run() } catch {
            throw Problem(message: "cannot run \(executable): \(error.localizedDescription)", fix: "check the fuse3 installation")
        }
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Problem(message: message.trimmingCharacters(in: .whitespacesAndNewlines),
                          fix: "check that it is an inkyfs mount and that no program has files open in it (lsof +D it)")
        }
        return process.terminationStatus
    }
}

import Foundation
import InkyCore

/// `inkyfs doctor`'s checks of the machine's FUSE: the device, fusermount3, /etc/fuse.conf,
/// and inkyfs mounts whose daemon died. The paths are parameters so a test can point them at
/// a missing device or a fuse.conf of its own.
public enum FUSEHealth {
    public struct Environment: Sendable {
        public var fuseDevice = "/dev/fuse"
        public var fuseConf = "/etc/fuse.conf"
        public var mounts = "/proc/self/mounts"
        public var isRoot = getuid() == 0
        public var userID = getuid()
        public init() {}
    }

    /// `allowOther`: the mount is asked for allow_other (or allow_root), which needs
    /// user_allow_other in fuse.conf unless root mounts.
    public static func checks(allowOther: Bool, environment: Environment = Environment()) -> [HealthCheck] {
        // Each mount is looked at once (a stuck one costs its 2 s once), for both checks.
        let ours = ownInkyfsLines(environment).map { (library: FilesystemKind.unescape(String($0[0])),
                                                      mountpoint: FilesystemKind.unescape(String($0[1]))) }
        let answers = ours.map { (mountpoint: $0.mountpoint, answer: MountAnswer.of($0.mountpoint)) }
        let live = zip(ours, answers).filter { $0.1.answer == .answering }.map(\.0)
        return [device(environment.fuseDevice), fusermount(environment), fuseConf(allowOther: allowOther, environment),
                HealthCheck("libfuse", .ok, FUSELibrary.version), mounts(answers)] + watching(live)
    }

    static func device(_ path: String) -> HealthCheck {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return HealthCheck("dev-fuse", .failed, "\(path) is missing: the kernel's FUSE support is not loaded",
                               fix: "sudo modprobe fuse   (in a container: run it with --device /dev/fuse)")
        }
        let description = "\(modeText(info.st_mode)) \(ownerName(info.st_uid)) \(groupName(info.st_gid))"
        guard info.st_mode & S_IFMT == S_IFCHR else {
            return HealthCheck("dev-fuse", .failed, "\(path) is not a character device (\(description))",
                               fix: "sudo rm \(path) && sudo mknod -m 666 \(path) c 10 229")
        }
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            return HealthCheck("dev-fuse", .failed, "\(path) (\(description)) does not open read-write: \(reason)",
                               fix: "sudo chmod 666 \(path)   (Debian's default: crw-rw-rw- root root)")
        }
        close(fd)
        return HealthCheck("dev-fuse", .ok, "\(path) (\(description)) opens read-write")
    }

    static func fusermount(_ environment: Environment) -> HealthCheck {
        guard let path = MountPreflight.findExecutable("fusermount3") else {
            return HealthCheck("fusermount3", environment.isRoot ? .warning : .failed,
                               "fusermount3 is not in PATH" + (environment.isRoot ? " (root mounts without it, users cannot)" : ""),
                               fix: "sudo apt-get install fuse3")
        }
        var info = stat()
        let resolved = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map {
            $0.hasPrefix("/") ? $0 : (path as NSString).deletingLastPathComponent + "/" + $0
        } ?? path
        guard stat(resolved, &info) == 0, info.st_uid == 0, info.st_mode & S_ISUID != 0 else {
            return HealthCheck("fusermount3", environment.isRoot ? .warning : .failed,
                               "\(path) is not setuid root" + (environment.isRoot ? " (root mounts without it, users cannot)" : ""),
                               fix: "sudo chown root \(resolved) && sudo chmod u+s \(resolved)")
        }
        return HealthCheck("fusermount3", .ok, "\(path) is setuid root")
    }

    static func fuseConf(allowOther: Bool, _ environment: Environment) -> HealthCheck {
        let text = (try? String(contentsOfFile: environment.fuseConf, encoding: .utf8)) ?? ""
        let enabled = text.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == "user_allow_other" }
        let state = "\(environment.fuseConf) \(enabled ? "has" : "lacks") user_allow_other"
        if !allowOther { return HealthCheck("fuse-conf", .ok, "\(state) (needed only for -o allow_other)") }
        if enabled || environment.isRoot { return HealthCheck("fuse-conf", .ok, state + (enabled ? "" : " (root may use allow_other without it)")) }
        return HealthCheck("fuse-conf", .failed, "\(state): -o allow_other will be refused",
                           fix: "echo user_allow_other | sudo tee -a \(environment.fuseConf)")
    }

    /// The lines of the mount table that are this user's inkyfs mounts (`user_id=` is who
    /// mounted): another user's mounts are theirs to look after, and not even reachable.
    static func ownInkyfsLines(_ environment: Environment) -> [[Substring]] {
        let table = ProcFile.read(environment.mounts) ?? ""
        let user = "user_id=\(environment.userID)"
        return table.split(separator: "\n").map { $0.split(separator: " ") }.filter { fields in
            fields.count > 3 && fields[2] == "fuse.inkyfs" && fields[3].split(separator: ",").contains { $0 == user }
        }
    }

    /// Every fuse.inkyfs mount of this user in this namespace; those whose daemon died answer
    /// ENOTCONN, those whose daemon stopped answering are given up on after 2 s each.
    static func mounts(_ answers: [(mountpoint: String, answer: MountAnswer)]) -> HealthCheck {
        let ours = answers.map(\.mountpoint)
        let stale = answers.filter { $0.answer == .gone }.map(\.mountpoint)
        let silent = answers.filter { $0.answer == .notAnswering }.map(\.mountpoint)
        if !stale.isEmpty || !silent.isEmpty {
            let said = (stale.isEmpty ? [] : ["stale mount\(stale.count == 1 ? "" : "s") (daemon gone): \(stale.joined(separator: ", "))"])
                + (silent.isEmpty ? [] : ["not answering (daemon stopped or stuck): \(silent.joined(separator: ", "))"])
            return HealthCheck("mounts", .failed, said.joined(separator: "; "),
                               fix: (stale.map { "fusermount3 -u -z '\($0)'" } + silent.map { MountAnswer.fix(for: $0) }).joined(separator: "; "))
        }
        return HealthCheck("mounts", .ok, ours.isEmpty ? "no inkyfs mounts" : "\(ours.count) live: \(ours.joined(separator: ", "))")
    }

    /// Per live inkyfs mount: whether the daemon's watcher can see every change of its library
    /// (then the kernel keeps names until told) or only `--tree-timeout` bounds how stale they get.
    static func watching(_ live: [(library: String, mountpoint: String)]) -> [HealthCheck] {
        live.compactMap { library, mountpoint -> HealthCheck? in
            guard let kind = FilesystemKind.of(library) else {
                return HealthCheck("watching", .warning, "\(mountpoint): its library \(library) cannot be reached")
            }
            guard kind.isLocal else {
                return HealthCheck("watching", .warning,
                                   "\(mountpoint): \(library) is on \(kind.name); changes made on other machines show after --tree-timeout (10 s)",
                                   fix: "lower it with -o tree_timeout=N if that is too long; nothing else can see them sooner")
            }
            return HealthCheck("watching", .ok, "\(mountpoint): \(library) is on \(kind.name); the watcher sees every change")
        }
    }

    private static func modeText(_ mode: mode_t) -> String {
        let kind: Character = mode & S_IFMT == S_IFCHR ? "c" : mode & S_IFMT == S_IFDIR ? "d" : "-"
        let letters = Array("rwxrwxrwx")
        return String(kind) + String((0 ..< 9).map { mode & (0o400 >> mode_t($0)) != 0 ? letters[$0] : "-" })
    }

    private static func ownerName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return String(uid) }
        return String(cString: name)
    }

    private static func groupName(_ gid: gid_t) -> String {
        guard let entry = getgrgid(gid), let name = entry.pointee.gr_name else { return String(gid) }
        return String(cString: name)
    }
}

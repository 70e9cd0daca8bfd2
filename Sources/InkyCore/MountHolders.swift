import Foundation

/// The processes that keep a mount busy: an open file, a working directory or a root inside
/// it, as fuser(1) finds them, from /proc (readlink of a descriptor prints its path; nothing is
/// asked of the mount itself). `inkyfs unmount` names them when a mount is busy, and the tests
/// name them when an unmount they wait for never comes.
public enum MountHolders {
    public struct Holder: Equatable, Sendable {
        public var pid: Int32
        public var name: String
        public var how: String

        public init(pid: Int32, name: String, how: String) {
            self.pid = pid
            self.name = name
            self.how = how
        }
    }

    /// The processes holding `mountpoint`, but for `excluding` (the caller, by default: a command
    /// that asks holds nothing there; a test may be the holder it looks for).
    public static func of(_ mountpoint: String, excluding: Int32? = getpid()) -> [Holder] {
        let inside = { (path: String) in path == mountpoint || path.hasPrefix(mountpoint == "/" ? "/" : mountpoint + "/") }
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
        return pids.filter { $0 != excluding }.sorted().compactMap { pid in
            let base = "/proc/\(pid)"
            var how: [String] = []
            if let cwd = link(base + "/cwd"), inside(cwd) { how.append("working directory") }
            if let root = link(base + "/root"), root != "/", inside(root) { how.append("root") }
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: base + "/fd")) ?? []
            let open = descriptors.filter { link(base + "/fd/" + $0).map(inside) ?? false }.count
            if open > 0 { how.append(open == 1 ? "an open file" : "\(open) open files") }
            guard !how.isEmpty else { return nil }
            let name = (try? String(contentsOfFile: base + "/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? "?"
            return Holder(pid: pid, name: name, how: how.joined(separator: ", "))
        }
    }

    private static func link(_ path: String) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: path)
    }
}

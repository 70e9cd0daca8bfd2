import Foundation
import Synchronization

/// One inkyfs mount as /proc/self/mountinfo shows it (a bind mount of one is a mount too, with
/// the same device and its own mount point).
public struct InkyfsMount: Sendable, Equatable {
    /// The device its files report in `st_dev`.
    public var device: UInt64
    public var mountpoint: String
    /// The library it serves, as its fsname says (commas in the path were written as '_').
    public var library: String
    /// The user who mounted it (`user_id=` of a FUSE mount), nil if the line does not say.
    public var userID: UInt32?

    /// Every inkyfs mount in a mountinfo text: fields "ID PARENT MAJOR:MINOR ROOT MOUNTPOINT
    /// OPTIONS [TAGS...] - TYPE SOURCE SUPEROPTIONS", the type `fuse.inkyfs` (`subtype=inkyfs`).
    public static func parse(_ mountinfo: String) -> [InkyfsMount] {
        mountinfo.split(separator: "\n").compactMap { line in
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2 else { return nil }
            let fields = halves[0].split(separator: " "), tail = halves[1].split(separator: " ")
            guard fields.count > 4, tail.count > 2, tail[0] == "fuse.inkyfs" else { return nil }
            let numbers = fields[2].split(separator: ":").compactMap { UInt64($0) }
            guard numbers.count == 2 else { return nil }
            let user = tail[2].split(separator: ",").first { $0.hasPrefix("user_id=") }.flatMap { UInt32($0.dropFirst(8)) }
            return InkyfsMount(device: makeDevice(major: numbers[0], minor: numbers[1]),
                               mountpoint: FilesystemKind.unescape(String(fields[4])),
                               library: FilesystemKind.unescape(String(tail[1])), userID: user)
        }
    }

    /// The kernel's number for the mount's FUSE connection: the minor of its device, which names
    /// its folder in /sys/fs/fuse/connections (writing 1 to its `abort` ends every request a stuck
    /// daemon holds). Read from the mount table, so it is known even when the mount answers nothing.
    public var connection: UInt64 { ((device >> 12) & 0xffff_ff00) | (device & 0xff) }

    /// The inkyfs mounts this process can see now.
    public static func current() -> [InkyfsMount] {
        parse(ProcFile.read("/proc/self/mountinfo") ?? "")
    }

    /// glibc's makedev: how `st_dev` packs a device's major and minor numbers.
    public static func makeDevice(major: UInt64, minor: UInt64) -> UInt64 {
        ((major & 0xffff_f000) << 32) | ((major & 0xfff) << 8) | ((minor & 0xffff_ff00) << 12) | (minor & 0xff)
    }
}

/// The inkyfs mounts this process can see, kept up to date cheaply: the mount table is read
/// again only when the kernel says it changed (poll on /proc/self/mountinfo reports POLLPRI after
/// any mount or unmount), so asking costs one `poll`.
///
/// A walk of the library that entered an inkyfs mount (its own mountpoint placed inside the
/// library, a bind mount of it, a second mount whose library holds the first) would have the
/// daemon wait on requests to itself, each nested one holding a thread (or a lock), until the
/// mount hangs for good. Even one `stat` of such a mountpoint is a request to its daemon, so
/// `LibraryRoot` leaves them out by their path, before touching them.
public final class InkyfsMountTable: Sendable {
    public static let shared = InkyfsMountTable()

    fileprivate struct State {
        var table: Int32 = -1
        var devices: Set<UInt64> = []
        /// Mount points by the folder that holds them.
        var byParent: [String: Set<String>] = [:]
        var mountpoints: [String] = []
    }
    /// Held while the table is read again, so two callers never read it at once.
    private let state = Mutex(State())

    private init() {}

    /// Whether `device` is that of an inkyfs mount (or of a bind mount of one).
    public func isInkyfs(_ device: UInt64) -> Bool {
        current { $0.devices.contains(device) }
    }

    /// The names in folder `path` (absolute, links resolved) that are inkyfs mount points.
    public func mountedNames(in path: String) -> Set<String> {
        current { $0.byParent[path] ?? [] }
    }

    /// Whether `path` (absolute, links resolved) is an inkyfs mount point or inside one that is
    /// strictly below `root` (a library that is itself on an inkyfs mount is read as usual).
    public func isInsideMount(_ path: String, below root: String) -> Bool {
        current { state in
            state.mountpoints.contains { point in
                point.count > root.count && point.hasPrefix(root == "/" ? "/" : root + "/")
                    && (path == point || path.hasPrefix(point + "/"))
            }
        }
    }

    private func current<T: Sendable>(_ body: (State) -> T) -> T {
        state.withLock { state in
            if state.table < 0 || state.changed() { state.reload() }
            return body(state)
        }
    }
}

private extension InkyfsMountTable.State {
    func changed() -> Bool {
        var watch = pollfd(fd: table, events: Int16(POLLPRI), revents: 0)
        return poll(&watch, 1, 0) > 0 && watch.revents & Int16(POLLPRI | POLLERR) != 0
    }

    /// Reads the table through the descriptor that is polled: reading it whole is what clears
    /// the change mark. Without /proc the table stays empty (nothing is left out).
    mutating func reload() {
        if table < 0 { table = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC) }
        guard table >= 0, lseek(table, 0, SEEK_SET) == 0 else { return }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Syscall.retrying { read(table, &buffer, buffer.count) }
            if count <= 0 { break }
            text.append(contentsOf: buffer[0 ..< count])
        }
        let mounts = InkyfsMount.parse(String(decoding: text, as: UTF8.self))
        devices = Set(mounts.map(\.device))
        mountpoints = mounts.map(\.mountpoint)
        byParent = [:]
        for point in mountpoints {
            guard let slash = point.lastIndex(of: "/") else { continue }
            let parent = slash == point.startIndex ? "/" : String(point[..<slash])
            byParent[parent, default: []].insert(String(point[point.index(after: slash)...]))
        }
    }
}

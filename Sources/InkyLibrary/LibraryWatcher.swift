import Foundation
import InkyCore
import Synchronization

/// Watches a library folder tree with inotify and reports changed paths (relative to the
/// library), debounced: a copy that writes for seconds is one change, reported when it settles.
/// When the kernel's watch limit is reached, or events overflow, it falls back to telling the
/// owner to rescan, periodically.
final class LibraryWatcher: Sendable {
    enum Change: Sendable, Equatable {
        case paths(Set<String>)
        /// Watching is incomplete (watch limit) or events were lost: compare everything.
        case rescan
    }

    private let library: String
    /// Folders are found without following links: a link loop adds no watch.
    private let root: LibraryRoot
    private let debounce: Double
    private let rescanInterval: Double
    private let report: @Sendable (Change) -> Void
    /// The inotify descriptor, -1 when there is none; set by `start` before the thread runs.
    private let inotify = Atomic<Int32>(-1)
    /// What the watching thread (and `start`, before it) keeps: folders by watch descriptor, and
    /// the kind of each device met, looked up once (finding it reads /proc/self/mountinfo).
    /// Taken for each use, never across a call: `parse` adds watches as it goes.
    private struct Watches {
        var folders: [Int32: String] = [:]
        var kinds: [UInt64: FilesystemKind?] = [:]
    }
    private let watches = Mutex(Watches())
    private struct Coverage {
        var degraded = false
        /// A watched folder whose changes inotify cannot see (network filesystem), by kind.
        var unseen: FilesystemKind?
    }
    private let coverage = Mutex(Coverage())
    private let stopped = Atomic(false)

    private static let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB
                                     | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

    init(library: String, debounce: Double = 0.3, rescanInterval: Double = 30, report: @escaping @Sendable (Change) -> Void) {
        self.library = library
        root = LibraryRoot(path: library)
        self.debounce = debounce
        self.rescanInterval = rescanInterval
        self.report = report
    }

    /// Starts watching on a thread of its own. Returns false when inotify is unavailable (then
    /// only the periodic rescan runs).
    @discardableResult
    func start() -> Bool {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        inotify.store(fd, ordering: .releasing)
        if fd >= 0 { watchTree("") } else { coverage.withLock { $0.degraded = true } }
        let thread = Thread { [self] in run() }
        thread.name = "inkyfs.watch"
        thread.start()
        return fd >= 0
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// Whether every change to the library reaches this watcher: inotify works, every folder
    /// is watched (the watch limit was not reached, no events were lost) and none lies on a
    /// filesystem other machines change. Only then may the kernel keep names until told.
    var seesEverything: Bool { blindSpot == nil }

    /// Why it does not see everything, in words for the log and `doctor`; nil when it does.
    var blindSpot: String? {
        if inotify.load(ordering: .acquiring) < 0 { return "inotify is unavailable" }
        return coverage.withLock { coverage in
            if coverage.degraded { return "the inotify watch limit (fs.inotify.max_user_watches) was reached or events were lost" }
            if let unseen = coverage.unseen { return "part of the library is on \(unseen.name), whose changes made elsewhere inotify cannot see" }
            return nil
        }
    }

    /// Adds watches for `relative` and every folder below it (never through a link); returns
    /// every path below `relative`, for events a new folder's watch came too late for.
    @discardableResult
    private func watchTree(_ relative: String) -> [String] {
        var found: [String] = []
        let fd = inotify.load(ordering: .acquiring)
        // Names alone: a comic's `lstat` would be a disk read per comic on a cold mount.
        root.walkNames(from: relative) { folder, device, entries in
            let real = folder.isEmpty ? library : library + "/" + folder
            let descriptor = WatchLimitHook.addWatch(fd, real, Self.mask, watching: watches.withLock { $0.folders.count })
            if descriptor < 0 {
                if errno == ENOSPC { coverage.withLock { $0.degraded = true } } // fs.inotify.max_user_watches reached
                return []
            }
            if let kind = kind(of: device, real), !kind.isLocal { coverage.withLock { $0.unseen = $0.unseen ?? kind } }
            watches.withLock { $0.folders[descriptor] = folder }
            found += entries.map { folder.isEmpty ? $0.name : folder + "/" + $0.name }
            return nil
        }
        return found
    }

    /// The filesystem kind of `device`, whose folder `real` is: a device is one filesystem, and
    /// looking one up resolves the path and reads the mount table, a tenth of a millisecond per folder.
    private func kind(of device: UInt64, _ real: String) -> FilesystemKind? {
        if let known = watches.withLock({ $0.kinds[device] }) { return known }
        let kind = FilesystemKind.of(real)
        watches.withLock { $0.kinds[device] = kind }
        return kind
    }

    private func run() {
        var pending = Set<String>()
        var needRescan = false
        var lastEvent = Date.distantPast
        var lastRescan = Date()
        let fd = inotify.load(ordering: .acquiring)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 << 10, alignment: 8)
        defer {
            buffer.deallocate()
            if fd >= 0 { close(fd) }
        }
        while !isStopped {
            if fd >= 0 {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, 100) > 0 {
                    let got = read(fd, buffer, 64 << 10)
                    if got > 0 {
                        needRescan = parse(buffer, count: got, into: &pending) || needRescan
                        lastEvent = Date()
                    }
                }
            } else {
                usleep(100_000)
            }
            let settled = Date().timeIntervalSince(lastEvent) >= debounce
            if settled && needRescan {
                report(.rescan)
                needRescan = false
                pending.removeAll()
            } else if settled && !pending.isEmpty {
                report(.paths(pending))
                pending.removeAll()
            }
            if coverage.withLock({ $0.degraded }) && Date().timeIntervalSince(lastRescan) >= rescanInterval {
                lastRescan = Date()
                report(.rescan)
            }
        }
    }

    /// Returns true when events were lost and everything must be compared.
    private func parse(_ buffer: UnsafeMutableRawPointer, count: Int, into pending: inout Set<String>) -> Bool {
        var offset = 0
        var overflow = false
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= count {
            let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
            let nameLength = Int(event.len)
            var name = ""
            if nameLength > 0 {
                let start = buffer.advanced(by: offset + header).assumingMemoryBound(to: CChar.self)
                name = String(cString: start)
            }
            offset += header + nameLength
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { overflow = true; continue }
            guard let folder = watches.withLock({ $0.folders[event.wd] }) else { continue }
            if event.mask & UInt32(IN_IGNORED) != 0 { watches.withLock { $0.folders[event.wd] = nil }; continue }
            let path = name.isEmpty ? folder : (folder.isEmpty ? name : folder + "/" + name)
            pending.insert(path)
            if event.mask & UInt32(IN_ISDIR) != 0, event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                // Files may have landed in the new folder before its watch existed.
                pending.formUnion(watchTree(path))
            }
        }
        return overflow
    }
}

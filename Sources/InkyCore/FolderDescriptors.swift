import Foundation
import Synchronization

/// Folders of the library recently opened (O_PATH, every component reached with O_NOFOLLOW), by
/// their path below the root: a comic's `status` is then one `fstatat` on its folder instead of
/// an `openat` per component (a listing of 20,000 comics made ~100,000 such walks).
///
/// A descriptor names the folder it was opened on, never a path: a folder swapped for a link
/// afterwards is not followed through it; at worst the old folder answers until the entry is
/// dropped. Entries are dropped when the library watcher reports a change at or above them
/// (`forget(under:)`), after `lifetime` seconds whatever happens (so a change nobody reports
/// is seen within that), and least recently used first beyond `capacity`.
final class FolderDescriptors: Sendable {
    /// An open folder, closed when the last user lets go of it (an eviction may race a lookup).
    final class Open: Sendable {
        let fd: Int32
        init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }

    private let capacity: Int
    private let lifetime: Double
    private struct State {
        var entries: [String: (folder: Open, opened: Double, lastUse: UInt64)] = [:]
        var clock: UInt64 = 0
    }
    private let state = Mutex(State())

    init(capacity: Int, lifetime: Double) {
        self.capacity = capacity
        self.lifetime = lifetime
    }

    /// The folder at `path` if it was opened less than `lifetime` seconds ago.
    func cached(_ path: String) -> Open? {
        let now = Self.now()
        return state.withLock { state in
            guard let entry = state.entries[path] else { return nil }
            guard now - entry.opened < lifetime else {
                state.entries[path] = nil
                return nil
            }
            state.clock += 1
            state.entries[path]!.lastUse = state.clock
            return entry.folder
        }
    }

    func insert(_ path: String, _ folder: Open) {
        let now = Self.now()
        state.withLock { state in
            state.clock += 1
            state.entries[path] = (folder, now, state.clock)
            if state.entries.count > capacity, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.entries[oldest.key] = nil
            }
        }
    }

    /// Drops `path` and every folder below it ("" drops them all).
    func forget(under path: String) {
        let prefix = path + "/"
        state.withLock { state in
            if path.isEmpty { return state.entries.removeAll() }
            state.entries = state.entries.filter { $0.key != path && !$0.key.hasPrefix(prefix) }
        }
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

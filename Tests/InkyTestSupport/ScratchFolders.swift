import Foundation
import Synchronization

/// The scratch folders this test process made, removed at its exit when still empty (`rmdir`:
/// a folder a test left something in stays, to be looked at), or whole when asked.
enum ScratchFolders {
    private static let paths = Mutex<[(path: String, whole: Bool)]>([])
    private static let registered = Mutex(false)

    static func made(_ path: String, removedWhole: Bool = false) {
        paths.withLock { $0.append((path, removedWhole)) }
        let first = registered.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        if first { atexit { ScratchFolders.removeEmpty() } }
    }

    private static func removeEmpty() {
        for (path, whole) in paths.withLock({ $0 }) {
            if whole { try? FileManager.default.removeItem(atPath: path) } else { rmdir(path) }
        }
    }
}

import Foundation
import Synchronization

/// The scratch folders this test process made, removed at its exit when still empty (`rmdir`:
/// a folder a test left something in stays, to be looked at), or whole when asked.
enum ScratchFolders {
    private static let paths = Mutex<[(path: String, whole: Bool)]>([])

    static func made(_ path: String, removedWhole: Bool = false) {
        let first = paths.withLock { paths -> Bool in
            defer { paths.append((path, removedWhole)) }
            return paths.isEmpty
        }
        if first { atexit { ScratchFolders.removeAtExit() } }
    }

    private static func removeAtExit() {
        for (path, whole) in paths.withLock({ $0 }) {
            if whole { try? FileManager.default.removeItem(atPath: path) } else { rmdir(path) }
        }
    }
}

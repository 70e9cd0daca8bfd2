import Foundation
import Synchronization

/// The scratch folders this test process made, removed at its exit when still empty (`rmdir`:
/// a folder a test left something in stays, to be looked at).
enum ScratchFolders {
    private static let paths = Mutex<[String]>([])
    private static let registered = Mutex(false)

    static func made(_ path: String) {
        paths.withLock { $0.append(path) }
        let first = registered.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        if first { atexit { ScratchFolders.removeEmpty() } }
    }

    private static func removeEmpty() {
        for path in paths.withLock({ $0 }) { rmdir(path) }
    }
}

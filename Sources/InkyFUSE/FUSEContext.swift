import Foundation
import InkyCore
import InkyLibrary

/// What every FUSE callback reaches through the session's userdata: the library and the
/// snapshots of open directories. Never a global: FUSE calls back on its own threads.
final class FUSEContext: @unchecked Sendable {
    let filesystem: LibraryFilesystem
    let log: @Sendable (String) -> Void
    private let lock = NSLock()
    private var directories: [UInt64: [DirectoryEntry]] = [:]
    private var nextHandle: UInt64 = 1

    init(filesystem: LibraryFilesystem, log: @escaping @Sendable (String) -> Void) {
        self.filesystem = filesystem
        self.log = log
    }

    /// Keeps a directory's listing for the readdir calls of one opendir (offsets stay stable).
    func openDirectory(_ entries: [DirectoryEntry]) -> UInt64 {
        lock.withLock {
            let handle = nextHandle
            nextHandle += 1
            directories[handle] = entries
            return handle
        }
    }

    func directory(_ handle: UInt64) -> [DirectoryEntry]? { lock.withLock { directories[handle] } }

    func closeDirectory(_ handle: UInt64) { lock.withLock { _ = directories.removeValue(forKey: handle) } }
}

import Foundation
import InkyCore
import InkyTree

/// What every FUSE callback reaches through the session's userdata: the tree it serves. Never
/// a global: FUSE calls back on its own threads.
final class FUSEContext: @unchecked Sendable {
    let filesystem: any MountedFilesystem
    let log: @Sendable (String) -> Void
    /// Set at init when the kernel takes ENOSYS from OPENDIR as "open, stop asking".
    var opendirOptional: Bool {
        get { lock.withLock { _opendirOptional } }
        set { lock.withLock { _opendirOptional = newValue } }
    }
    private let lock = NSLock()
    private var _opendirOptional = false
    /// Directories whose last reply went to their end, by inode, with the offset after it.
    private var listedToEnd: [UInt64: Int] = [:]

    /// A reply to READDIR(PLUS) of `inode` held its last entry, the next offset being `end`;
    /// nil: it did not (an older end must not cut this listing short where it stops).
    func listed(_ inode: UInt64, toEnd end: Int?) {
        lock.withLock {
            if listedToEnd.count >= 4096 { listedToEnd.removeAll() }
            listedToEnd[inode] = end
        }
    }

    /// Whether `offset` is past the end the last reply for `inode` reached (once): the kernel
    /// asks once more after every directory's last entries, and that answer is empty. Listing
    /// the directory again only to find nothing after it cost as much as the listing itself.
    func isPastEnd(_ inode: UInt64, offset: Int) -> Bool {
        lock.withLock {
            guard offset > 0, listedToEnd[inode] == offset else { return false }
            listedToEnd[inode] = nil
            return true
        }
    }

    init(filesystem: any MountedFilesystem, log: @escaping @Sendable (String) -> Void) {
        self.filesystem = filesystem
        self.log = log
    }
}

import Foundation
internal import CFuse3
import InkyTree

/// Tells the kernel to forget names and inodes of a mounted session (libfuse notifications).
/// Called from the watcher's thread, never from inside a request handler.
final class FUSEKernelCache: KernelCacheInvalidating, @unchecked Sendable {
    private let session: OpaquePointer

    init(session: OpaquePointer) { self.session = session }

    func invalidateEntry(parent: NodeID, name: String) {
        // ENOENT when the kernel never cached it: nothing to forget.
        _ = name.withCString { fuse_lowlevel_notify_inval_entry(session, fuse_ino_t(parent), $0, strlen($0)) }
    }

    func invalidateNode(_ id: NodeID) {
        _ = fuse_lowlevel_notify_inval_inode(session, fuse_ino_t(id), 0, 0)
    }
}

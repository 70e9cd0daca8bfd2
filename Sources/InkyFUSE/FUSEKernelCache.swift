import Foundation
internal import CFuse3
import InkyTree

/// Tells the kernel to forget names and inodes of a mounted session (libfuse notifications).
/// Called from the watcher's thread, never from inside a request handler.
final class FUSEKernelCache: KernelCacheInvalidating, Sendable {
    /// The libfuse session; its notify calls may be made from any thread.
    nonisolated(unsafe) private let session: OpaquePointer
    private let context: FUSEContext?

    init(session: OpaquePointer, context: FUSEContext? = nil) {
        self.session = session
        self.context = context
    }

    func invalidateEntry(parent: NodeID, name: String) {
        // ENOENT when the kernel never cached it: nothing to forget.
        _ = name.withCString { fuse_lowlevel_notify_inval_entry(session, fuse_ino_t(parent), $0, strlen($0)) }
    }

    func invalidateNode(_ id: NodeID) {
        _ = fuse_lowlevel_notify_inval_inode(session, fuse_ino_t(id), 0, 0)
    }

    /// Called from the tree's background loading: the reply is encoded on that thread.
    func listingReady(_ id: NodeID, stamp: ListingStamp, entries: [DirectoryEntry]) {
        guard let context else { return }
        context.listingReplies.prepare(id, stamp: stamp, entries: entries, in: context.filesystem)
    }
}

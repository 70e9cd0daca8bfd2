import Foundation
internal import CFuse3
import InkyTree
import Synchronization

/// Tells the kernel to forget names and inodes of a mounted session (libfuse notifications).
/// Called from the watcher's thread, or from a request handler once its reply went out
/// (`FUSEParentRelisting`), never before: the kernel may hold what the notification needs
/// while it waits for that reply.
final class FUSEKernelCache: KernelCacheInvalidating, Sendable {
    /// The libfuse session; its notify calls may be made from any thread.
    nonisolated(unsafe) private let session: OpaquePointer
    private let context: FUSEContext?
    /// Until the kernel has the root's attributes (`rootAttributesApplied`), an invalidation of
    /// the root is held here, to be sent then: the kernel drops a GETATTR answer when its node
    /// was invalidated after the request went out, and a root that never took one has no
    /// permission bits (`MountRootAttributes`). true: one is held.
    private let heldRoot = Mutex<Bool?>(false)
    private static let root = NodeID(FUSE_ROOT_ID)

    init(session: OpaquePointer, context: FUSEContext? = nil) {
        self.session = session
        self.context = context
    }

    func invalidateEntry(parent: NodeID, name: String) {
        // ENOENT when the kernel never cached it: nothing to forget. (It marks the parent's
        // attributes stale, but never makes the kernel drop an answer.)
        _ = name.withCString { fuse_lowlevel_notify_inval_entry(session, fuse_ino_t(parent), $0, strlen($0)) }
    }

    func invalidateNode(_ id: NodeID) {
        if id == Self.root, heldRoot.withLock({ held in
            guard held != nil else { return false }
            held = true
            return true
        }) { return }
        _ = fuse_lowlevel_notify_inval_inode(session, fuse_ino_t(id), 0, 0)
    }

    /// The kernel holds attributes the daemon gave for the root: from now on an answer it drops
    /// leaves those in place, and the root's invalidations go out as they come (a held one now).
    func rootAttributesApplied() {
        let held = heldRoot.withLock { held in
            defer { held = nil }
            return held ?? false
        }
        if held { _ = fuse_lowlevel_notify_inval_inode(session, fuse_ino_t(Self.root), 0, 0) }
    }

    /// Called from the tree's background loading: the reply is encoded on that thread.
    func listingReady(_ id: NodeID, stamp: ListingStamp, entries: [DirectoryEntry]) {
        guard let context else { return }
        context.listingReplies.prepare(id, stamp: stamp, entries: entries, in: context.filesystem)
    }
}

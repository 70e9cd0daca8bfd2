import InkyTree
import Synchronization

/// Drops a folder's listing from the kernel once enough of its subdirectories were listed, so
/// that the next listing of the folder answers for all of them in one reply.
///
/// On a mount that is not `ro` the kernel marks a directory's access time stale whenever it
/// fetches the directory's listing from the daemon (`fuse_readdir_uncached` ends with
/// `fuse_invalidate_atime`). The next stat of that directory (`ls -l` of its parent, a file
/// manager's) then asks the daemon for its attributes once more: after a first `ls -lR`, one
/// GETATTR per comic, a fifth of the first listing's work, for nothing that changed. A
/// readdirplus listing of the parent hands the kernel every child's attributes and clears that
/// mark for all of them; so the parent's listing is dropped (libfuse's inode notification), and
/// the next `ls -l` of it costs one request where it cost one per subdirectory.
///
/// "Enough" weighs that relisting against the GETATTRs it saves: one subdirectory listed for a
/// folder of up to 63 entries, one more per 64 entries beyond. A reader who opens one comic of
/// a 20,000-comic folder and goes back pays one GETATTR, not a listing of 20,000 entries.
final class FUSEParentRelisting: Sendable {
    private struct State {
        /// Folders listed with at least 64 entries, by inode, with how many.
        var sizes: [NodeID: Int] = [:]
        /// Folders whose subdirectories were listed since they were, with how many so far.
        var childrenListed: [NodeID: Int] = [:]
        /// Folders whose listing was dropped and not fetched since: nothing more to drop.
        var dropped: Set<NodeID> = []
    }

    private let state = Mutex(State())
    /// On a `ro` mount the kernel keeps access times as they are: nothing to make up for.
    private let enabled: Bool
    /// Past this many folders in a table, it starts over: forgetting costs at most a GETATTR
    /// per directory, or one needless relisting.
    private static let tableLimit = 65_536

    init(enabled: Bool) {
        self.enabled = enabled
    }

    /// Directory `inode`, whose parent is `parent`, was listed from its start with `entries`
    /// entries (nil: not known). Drops the parent's listing (through `cache`) when it is time.
    /// Call after the listing's reply went out, never before: the kernel then waits on nothing
    /// of this thread's, and the notification is in before this thread takes another request.
    /// Returns whether this listing is one that was dropped here: the kernel then
    /// still holds the listings of the subdirectories that made it so, and listing those ahead
    /// (`MountedFilesystem.directoryListed`) would be work for nobody. `parent` and `cache` are
    /// asked only when needed: never on a `ro` mount, the cache only to drop.
    @discardableResult
    func listed(_ inode: NodeID, entries: Int?, parent: @autoclosure () -> NodeID,
                cache: @autoclosure () -> (any KernelCacheInvalidating)?) -> Bool {
        guard enabled else { return false }
        let parent = parent()
        let (refetched, drop) = state.withLock { state -> (Bool, Bool) in
            if state.sizes.count >= Self.tableLimit { state.sizes.removeAll() }
            if state.childrenListed.count >= Self.tableLimit { state.childrenListed.removeAll() }
            if state.dropped.count >= Self.tableLimit { state.dropped.removeAll() }
            // This directory's own listing is in the kernel again: its subdirectories count anew.
            let refetched = state.dropped.remove(inode) != nil
            state.childrenListed[inode] = nil
            if let entries, entries >= 64 { state.sizes[inode] = entries } else { state.sizes[inode] = nil }
            guard parent != inode, !state.dropped.contains(parent) else { return (refetched, false) }
            let listed = (state.childrenListed[parent] ?? 0) + 1
            guard listed >= 1 + (state.sizes[parent] ?? 0) / 64 else {
                state.childrenListed[parent] = listed
                return (refetched, false)
            }
            state.childrenListed[parent] = nil
            state.dropped.insert(parent)
            return (refetched, true)
        }
        if drop { cache()?.invalidateNode(parent) }
        return refetched
    }
}

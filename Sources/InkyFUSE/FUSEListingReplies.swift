import Foundation
internal import CFuse3
import InkyTree
import Synchronization

/// READDIRPLUS replies of comic directories encoded ahead, on the background thread that loaded
/// the comic, from the entries it hands over (listing ahead, `KernelCacheInvalidating.listingReady`).
/// A warm `ls -lR` then finds the bytes to send instead of making each page's entry and
/// attributes on the requester's CPU, which was 19 µs of the daemon's 26 µs per comic directory
/// (20,000 comics: 0.4 s).
///
/// A reply is sent once, and only if the tree still gives the stamp it was made under (the
/// same checks of the comic's file as a listing's), it fits the request, and no name in it is
/// being looked up (those go out without attributes, see `FUSEContext.beingLookedUp`).
final class FUSEListingReplies: Sendable {
    struct Ready {
        let stamp: ListingStamp
        let bytes: [UInt8]
        /// Entries that went out with attributes: lookups the kernel will FORGET.
        let remembered: [DirectoryEntry]
        /// The offset after the last entry: the end of the directory.
        let next: Int
        /// When it was made, in the order of `made`: the oldest gives way first.
        let made: UInt64
    }

    /// How much the kernel asked for in its last READDIRPLUS: a page until Linux 6.14, up to
    /// the reader's buffer since (ls asks 64 KiB: a comic of 24 pages did not fit a page, and
    /// was listed at its request). A reply is made to fit that.
    var replySize: Int {
        get { _replySize.load(ordering: .relaxed) }
        set { _replySize.store(newValue, ordering: .relaxed) }
    }
    /// About five folders of comics ahead (~4 KiB each), and at most `byteLimit` of replies
    /// (a 400-page comic's is 64 KiB). When full the oldest reply gives way: one never asked
    /// for is a directory the walk passed (listed by its own request before its reply was
    /// made, or a folder listed and not entered). Refusing new ones instead kept those for
    /// good, and every comic after them was listed at its request.
    static let limit = 128
    static let byteLimit = 2 << 20

    private struct State {
        var ready: [UInt64: Ready] = [:]
        var made: UInt64 = 0
        var bytes = 0

        /// Drops `inode`'s reply, if one waits.
        @discardableResult
        mutating func remove(_ inode: UInt64) -> Ready? {
            guard let reply = ready.removeValue(forKey: inode) else { return nil }
            bytes -= reply.bytes.count
            return reply
        }
    }
    private let state = Mutex(State())
    private let _replySize = Atomic(4096)

    /// Encodes directory `id`'s reply from the entries the tree made under `stamp`.
    func prepare(_ id: NodeID, stamp: ListingStamp, entries: [DirectoryEntry], in filesystem: any MountedFilesystem) {
        let filled = DirectoryBuffer.fill(request: nil, directory: id, parent: filesystem.parent(of: id), entries: entries,
                                          offset: 0, size: replySize, attributes: { filesystem.attributesWithoutListing(of: $0) })
        // Only a whole directory. The entries were made with the stamp: if the comic changed
        // since, the stamp the request gets differs from this one and the reply is not sent.
        guard filled.next == entries.count + 2 else { return }
        state.withLock { state in
            state.remove(UInt64(id))
            while state.ready.count >= Self.limit || (!state.ready.isEmpty && state.bytes + filled.bytes.count > Self.byteLimit),
                  let oldest = state.ready.min(by: { $0.value.made < $1.value.made }) {
                state.remove(oldest.key)
            }
            state.made += 1
            state.bytes += filled.bytes.count
            state.ready[UInt64(id)] = Ready(stamp: stamp, bytes: filled.bytes, remembered: filled.remembered, next: filled.next, made: state.made)
        }
    }

    /// Whether a reply for `inode` waits (cheap: no check of the comic).
    func isReady(_ inode: UInt64) -> Bool { state.withLock { $0.ready[inode] != nil } }

    /// The reply for `inode` if it was made under `stamp`; taken either way.
    func take(_ inode: UInt64, stamp: ListingStamp?) -> Ready? {
        state.withLock { state in
            guard let reply = state.remove(inode), reply.stamp == stamp else { return nil }
            return reply
        }
    }
}

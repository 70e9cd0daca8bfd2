import Foundation
internal import CFuse3
import InkyTree

/// READDIRPLUS replies of comic directories encoded ahead, on the background thread that loaded
/// the comic (listing ahead, `KernelCacheInvalidating.listingReady`). A warm `ls -lR` then finds
/// the bytes to send instead of making each page's entry and attributes on the requester's CPU,
/// which was 19 µs of the daemon's 26 µs per comic directory (20,000 comics: 0.4 s).
///
/// A reply is sent once, and only if the tree still gives the stamp it was made under (the
/// same checks of the comic's file as a listing's), it fits the request, and no name in it is
/// being looked up (those go out without attributes, see `FUSEContext.beingLookedUp`).
final class FUSEListingReplies: @unchecked Sendable {
    struct Ready {
        let stamp: ListingStamp
        let bytes: [UInt8]
        /// Entries that went out with attributes: lookups the kernel will FORGET.
        let remembered: [DirectoryEntry]
        /// The offset after the last entry: the end of the directory.
        let next: Int
        let made: Date
    }

    /// The kernel asks for a directory a page at a time.
    static let replySize = 4096
    /// About five folders of comics ahead (~6 KB each); replies never asked for (a folder listed
    /// but not entered) give way after `staleAfter`.
    static let limit = 128
    static let staleAfter: TimeInterval = 10

    private let lock = NSLock()
    private var ready: [UInt64: Ready] = [:]

    /// Encodes directory `id`'s reply if the tree makes it ahead and there is room.
    func prepare(_ id: NodeID, in filesystem: any MountedFilesystem) {
        guard hasRoom() else { return }
        guard let stamp = filesystem.listingStamp(of: id), case .success(let entries) = filesystem.directoryEntries(of: id) else { return }
        let filled = DirectoryBuffer.fill(request: nil, directory: id, parent: filesystem.parent(of: id), entries: entries,
                                          offset: 0, size: Self.replySize, attributes: { filesystem.attributesWithoutListing(of: $0) })
        // Only a whole directory. The entries were made after the stamp: if the comic changed
        // since, the stamp the request gets differs from this one and the reply is not sent.
        guard filled.next == entries.count + 2 else { return }
        let reply = Ready(stamp: stamp, bytes: filled.bytes, remembered: filled.remembered, next: filled.next, made: Date())
        lock.withLock { ready[UInt64(id)] = reply }
    }

    private func hasRoom() -> Bool {
        lock.withLock {
            if ready.count >= Self.limit {
                let now = Date()
                ready = ready.filter { now.timeIntervalSince($0.value.made) < Self.staleAfter }
            }
            return ready.count < Self.limit
        }
    }

    /// Whether a reply for `inode` waits (cheap: no check of the comic).
    func isReady(_ inode: UInt64) -> Bool { lock.withLock { ready[inode] != nil } }

    /// The reply for `inode` if it was made under `stamp`; taken either way.
    func take(_ inode: UInt64, stamp: ListingStamp?) -> Ready? {
        lock.withLock {
            guard let reply = ready.removeValue(forKey: inode), reply.stamp == stamp else { return nil }
            return reply
        }
    }
}

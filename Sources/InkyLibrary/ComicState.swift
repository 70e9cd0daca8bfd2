import Foundation
import InkyCore
import Synchronization

/// One comic of the mounted library: its file identity and the listing of the current
/// generation. Its page fetches run in order on the library's fetch threads, one at a time
/// (`BoundedWork`, strand = the comic): readers of one comic share its decoder.
final class ComicState: Sendable {
    let comic: ComicRef
    let realPath: String
    /// Held while listing, so concurrent lookups list once.
    let listingLock = Mutex(())

    fileprivate struct State {
        var identity: FileIdentity?
        /// Which generation of the file the pages are of (`ComicGenerations`): a page's inode number
        /// is (comic, generation, index), so a changed file's pages get new numbers and the kernel
        /// never serves cached (keep_cache) bytes of the old file for them.
        var generation = 0
        var listing: Result<ComicListing, ComicError>?
        /// Page numbers by name, made at the first lookup of a page by name (a listing read ahead
        /// is answered from the listing itself, and most are never looked up).
        var pageIndex: [String: Int]?
        var comicInfo: [UInt8]?
        var currentPage = 0
        /// The number of the last read's move (`moveTo`).
        var lastMove = 0
        var listedAt = Date.distantPast
        var zipLayout: (generation: Int, layout: StoredZipLayout)?
        var permissions: SourcePermissions?
        /// Moves whenever what the comic's directory lists does (listing, sizes learned, modes):
        /// a reply encoded ahead is sent only while it stands still (`ListingStamp`). Taken from
        /// one count for all states, so a state made anew never repeats a dropped one's.
        var revision = ComicState.nextRevision()
    }
    private let state = Mutex(State())
    private static let revisions = Atomic(0)
    /// Reads' moves, numbered across all states: a move numbered lower came first.
    private static let moves = Atomic(0)

    fileprivate static func nextRevision() -> Int { revisions.add(1, ordering: .relaxed).newValue }

    /// Held while the pages' CRC-32s are computed, so concurrent opens of the CBZ compute once.
    let checksumLock = Mutex(())

    /// Held from a claim of pages to their request's place on the fetch strand, and while the
    /// window moves: fetches reach the strand in the order they claimed, so a later page is never
    /// decoded before an earlier one (which would send a solid decoder back to the start).
    let fetchOrder = Mutex(())

    /// An I/O error while listing is the disk's, not the archive's: such a comic is listed
    /// again at a lookup this long after, so it recovers with the disk instead of at remount.
    static let ioErrorRetrySeconds = 5.0

    init(comic: ComicRef, realPath: String) {
        self.comic = comic
        self.realPath = realPath
    }

    struct Snapshot: Sendable {
        var identity: FileIdentity
        var generation: Int
        var listing: Result<ComicListing, ComicError>
    }

    var generation: Int { state.withLock { s in s.generation } }

    /// Compares the file with what was listed; a change starts a new generation. Returns the
    /// new identity and whether the generation moved.
    func refresh(_ identity: FileIdentity, _ generations: ComicGenerations) -> Bool {
        replace(identity, generations).changed
    }

    /// `refresh`, also giving what was listed before a change: the names the kernel may still hold.
    func replace(_ identity: FileIdentity, _ generations: ComicGenerations) -> (changed: Bool, previous: Snapshot?) {
        state.withLock { s in
            guard s.identity != identity else { return (false, nil) }
            let changed = s.identity != nil
            let previous = s.identity.flatMap { old in s.listing.map { Snapshot(identity: old, generation: s.generation, listing: $0) } }
            s.generation = generations.generation(for: comic, identity: identity, current: s.seen)
            s.identity = identity
            s.listing = nil
            s.revision = Self.nextRevision()
            s.pageIndex = nil
            s.comicInfo = nil
            return (changed, previous)
        }
    }

    func snapshot() -> Snapshot? { state.withLock { $0.snapshot() } }

    /// The snapshot with the revision it stands at and the modes its directory shows, taken
    /// together: what a listing made ahead is made from (`ListingStamp`), so a change made
    /// meanwhile moves the revision past the stamp instead of slipping under it.
    func stampedSnapshot() -> (snapshot: Snapshot, revision: Int, permissions: SourcePermissions?)? {
        state.withLock { s in s.snapshot().map { ($0, s.revision, s.permissions) } }
    }


    /// Stores a listing made for `identity`; ignored when the file moved on meanwhile.
    func store(_ listing: Result<ComicListing, ComicError>, for identity: FileIdentity) {
        state.withLock { s in
            guard identity == s.identity else { return }
            s.listing = listing
            s.revision = Self.nextRevision()
            s.listedAt = Date()
            s.pageIndex = nil
        }
    }

    /// `listing` as a new generation of the same identity: the comic's content changed while its
    /// file's identity did not (a page of a folder comic rewritten in place). Returns what was
    /// listed before; nil when the file moved on meanwhile or nothing was listed yet.
    func relist(_ listing: Result<ComicListing, ComicError>, for identity: FileIdentity, _ generations: ComicGenerations) -> Snapshot? {
        state.withLock { s in
            guard identity == s.identity, let seen = s.seen, let previous = s.snapshot() else { return nil }
            s.generation = generations.renewed(for: comic, current: seen)
            s.listing = listing
            s.listedAt = Date()
            s.revision = Self.nextRevision()
            s.pageIndex = nil
            s.comicInfo = nil
            s.zipLayout = nil
            return previous
        }
    }

    /// Replaces a good listing by the error that reading it ran into (a dead parser).
    func markFailed(_ error: ComicError, generation: Int) {
        state.withLock { s in
            guard generation == s.generation else { return }
            s.listing = .failure(error)
            s.revision = Self.nextRevision()
            s.pageIndex = nil
        }
    }

    /// Keeps sizes learned by rendering pages of `generation`; returns the listing (and the
    /// identity it belongs to) to store in the index, nil when the comic moved on.
    func learn(sizes: [Int: Int64] = [:], crcs: [Int: UInt32] = [:], generation: Int) -> (ComicListing, FileIdentity)? {
        state.withLock { s in
            guard generation == s.generation, let identity = s.identity, case .success(let listing) = s.listing else { return nil }
            let updated = listing.learning(sizes: sizes).learning(crcs: crcs)
            s.listing = .success(updated)
            s.revision = Self.nextRevision()
            return (updated, identity)
        }
    }

    /// The comic laid out as a CBZ for `generation`, made once (`--as cbz`).
    func zipLayout(generation: Int, make: () -> StoredZipLayout?) -> StoredZipLayout? {
        state.withLock { s in
            if let kept = s.zipLayout, kept.generation == generation { return kept.layout }
            guard generation == s.generation, let layout = make() else { return nil }
            s.zipLayout = (generation, layout)
            return layout
        }
    }


    /// `seen`, taking the lock: for a state being dropped.
    var lastSeen: ComicGenerations.Seen? { state.withLock { $0.seen } }

    func pageNumber(named name: String) -> Int? {
        state.withLock { s in
            if s.pageIndex == nil, case .success(let listing)? = s.listing {
                s.pageIndex = Dictionary(listing.pages.map { ($0.name, $0.number) }, uniquingKeysWith: { first, _ in first })
            }
            return s.pageIndex?[name]
        }
    }

    /// What keeping this state costs, in pages (`ComicStates`' budget): its pages, plus eight
    /// for what every state holds whatever its length (identity, listing, names): weighed by
    /// pages alone, a library of 2-page comics kept 33,000 states in the same budget.
    var weight: Int {
        state.withLock { s in
            guard case .success(let listing)? = s.listing else { return 8 }
            return 8 + listing.pages.count
        }
    }

    var revision: Int { state.withLock { s in s.revision } }

    /// Whose the comic's file was at its last check: its directory listing shows them without
    /// looking at the file a second time.
    var permissions: SourcePermissions? {
        get { state.withLock { s in s.permissions } }
        set {
            state.withLock { s in
                if s.permissions != newValue { s.revision = Self.nextRevision() }
                s.permissions = newValue
            }
        }
    }

    var comicInfo: [UInt8]? {
        get { state.withLock { s in s.comicInfo } }
        set { state.withLock { s in s.comicInfo = newValue } }
    }

    /// Records the page a reader is on; returns the previous one and this move's number.
    func moveTo(page: Int) -> (previous: Int, move: Int) {
        state.withLock { s in
            let previous = s.currentPage
            s.currentPage = page
            s.lastMove = Self.moves.add(1, ordering: .relaxed).newValue
            return (previous, s.lastMove)
        }
    }

    /// Whether no read moved after move `move`.
    func isLastMove(_ move: Int) -> Bool { state.withLock { s in s.lastMove == move } }
}

private extension ComicState.State {
    func snapshot() -> ComicState.Snapshot? {
        guard let identity, let listing else { return nil }
        if case .failure(.io) = listing, Date().timeIntervalSince(listedAt) > ComicState.ioErrorRetrySeconds { return nil }
        return ComicState.Snapshot(identity: identity, generation: generation, listing: listing)
    }

    /// The generation as `ComicGenerations` keeps it, nil before the file was first seen.
    var seen: ComicGenerations.Seen? {
        identity.map { ComicGenerations.Seen(hash: $0.generation, generation: generation) }
    }
}

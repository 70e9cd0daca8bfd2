import Foundation
import InkyCore

/// One comic of the mounted library: its file identity and the listing of the current
/// generation. Its page fetches run in order on the library's fetch threads, one at a time
/// (`BoundedWork`, strand = the comic): readers of one comic share its decoder.
final class ComicState: @unchecked Sendable {
    let comic: ComicRef
    let realPath: String
    /// Held while listing, so concurrent lookups list once.
    let listingLock = NSLock()

    private let lock = NSLock()
    private var _identity: FileIdentity?
    /// Which generation of the file the pages are of (`ComicGenerations`): a page's inode number
    /// is (comic, generation, index), so a changed file's pages get new numbers and the kernel
    /// never serves cached (keep_cache) bytes of the old file for them.
    private var _generation = 0
    private var _listing: Result<ComicListing, ComicError>?
    /// Page numbers by name, made at the first lookup of a page by name (a listing read ahead
    /// is answered from the listing itself, and most are never looked up).
    private var _pageIndex: [String: Int]?
    private var _comicInfo: [UInt8]?
    private var _currentPage = 0
    private var _recordedOnce = false
    private var _listedAt = Date.distantPast
    private var _zipLayout: (generation: Int, layout: StoredZipLayout)?
    private var _permissions: SourcePermissions?
    /// Moves whenever what the comic's directory lists does (listing, sizes learned, modes):
    /// a reply encoded ahead is sent only while it stands still (`ListingStamp`). Taken from
    /// one count for all states, so a state made anew never repeats a dropped one's.
    private var _revision = ComicState.nextRevision()
    private static let revisionLock = NSLock()
    nonisolated(unsafe) private static var revisions = 0

    private static func nextRevision() -> Int {
        revisionLock.withLock {
            revisions += 1
            return revisions
        }
    }
    /// Held while the pages' CRC-32s are computed, so concurrent opens of the CBZ compute once.
    let checksumLock = NSLock()

    /// An I/O error while listing is the disk's, not the archive's: such a comic is listed
    /// again at a lookup this long after, so it recovers with the disk instead of at remount.
    static let ioErrorRetrySeconds = 5.0

    /// True once a read of this comic was recorded (the first read of page 0 counts too).
    var recordedOnce: Bool {
        get { lock.withLock { _recordedOnce } }
        set { lock.withLock { _recordedOnce = newValue } }
    }

    init(comic: ComicRef, realPath: String) {
        self.comic = comic
        self.realPath = realPath
    }

    struct Snapshot {
        var identity: FileIdentity
        var generation: Int
        var listing: Result<ComicListing, ComicError>
    }

    var generation: Int { lock.withLock { _generation } }

    /// Compares the file with what was listed; a change starts a new generation. Returns the
    /// new identity and whether the generation moved.
    func refresh(_ identity: FileIdentity, _ generations: ComicGenerations) -> Bool {
        replace(identity, generations).changed
    }

    /// `refresh`, also giving what was listed before a change: the names the kernel may still hold.
    func replace(_ identity: FileIdentity, _ generations: ComicGenerations) -> (changed: Bool, previous: Snapshot?) {
        lock.withLock {
            guard _identity != identity else { return (false, nil) }
            let changed = _identity != nil
            let previous = _identity.flatMap { old in _listing.map { Snapshot(identity: old, generation: _generation, listing: $0) } }
            _generation = generations.generation(for: comic, identity: identity, current: seen)
            _identity = identity
            _listing = nil
            _revision = Self.nextRevision()
            _pageIndex = nil
            _comicInfo = nil
            return (changed, previous)
        }
    }

    func snapshot() -> Snapshot? { lock.withLock { lockedSnapshot() } }

    /// The snapshot with the revision it stands at and the modes its directory shows, taken
    /// together: what a listing made ahead is made from (`ListingStamp`), so a change made
    /// meanwhile moves the revision past the stamp instead of slipping under it.
    func stampedSnapshot() -> (snapshot: Snapshot, revision: Int, permissions: SourcePermissions?)? {
        lock.withLock { lockedSnapshot().map { ($0, _revision, _permissions) } }
    }

    private func lockedSnapshot() -> Snapshot? {
        guard let identity = _identity, let listing = _listing else { return nil }
        if case .failure(.io) = listing, Date().timeIntervalSince(_listedAt) > Self.ioErrorRetrySeconds { return nil }
        return Snapshot(identity: identity, generation: _generation, listing: listing)
    }

    /// Stores a listing made for `identity`; ignored when the file moved on meanwhile.
    func store(_ listing: Result<ComicListing, ComicError>, for identity: FileIdentity) {
        lock.withLock {
            guard identity == _identity else { return }
            _listing = listing
            _revision = Self.nextRevision()
            _listedAt = Date()
            _pageIndex = nil
        }
    }

    /// Replaces a good listing by the error that reading it ran into (a dead parser).
    func markFailed(_ error: ComicError, generation: Int) {
        lock.withLock {
            guard generation == _generation else { return }
            _listing = .failure(error)
            _revision = Self.nextRevision()
            _pageIndex = nil
        }
    }

    /// Keeps sizes learned by rendering pages of `generation`; returns the listing (and the
    /// identity it belongs to) to store in the index, nil when the comic moved on.
    func learn(sizes: [Int: Int64] = [:], crcs: [Int: UInt32] = [:], generation: Int) -> (ComicListing, FileIdentity)? {
        lock.withLock {
            guard generation == _generation, let identity = _identity, case .success(let listing) = _listing else { return nil }
            let updated = listing.learning(sizes: sizes).learning(crcs: crcs)
            _listing = .success(updated)
            _revision = Self.nextRevision()
            return (updated, identity)
        }
    }

    /// The comic laid out as a CBZ for `generation`, made once (`--as cbz`).
    func zipLayout(generation: Int, make: () -> StoredZipLayout?) -> StoredZipLayout? {
        lock.withLock {
            if let kept = _zipLayout, kept.generation == generation { return kept.layout }
            guard generation == _generation, let layout = make() else { return nil }
            _zipLayout = (generation, layout)
            return layout
        }
    }

    /// The generation as `ComicGenerations` keeps it, nil before the file was first seen.
    private var seen: ComicGenerations.Seen? {
        _identity.map { ComicGenerations.Seen(hash: $0.generation, generation: _generation) }
    }

    /// `seen`, taking the lock: for a state being dropped.
    var lastSeen: ComicGenerations.Seen? { lock.withLock { seen } }

    func pageNumber(named name: String) -> Int? {
        lock.withLock {
            if _pageIndex == nil, case .success(let listing)? = _listing {
                _pageIndex = Dictionary(listing.pages.map { ($0.name, $0.number) }, uniquingKeysWith: { first, _ in first })
            }
            return _pageIndex?[name]
        }
    }

    /// What keeping this state costs, in pages (`ComicStates`' budget): its pages, plus eight
    /// for what every state holds whatever its length (identity, listing, names): weighed by
    /// pages alone, a library of 2-page comics kept 33,000 states in the same budget.
    var weight: Int {
        lock.withLock {
            guard case .success(let listing)? = _listing else { return 8 }
            return 8 + listing.pages.count
        }
    }

    var revision: Int { lock.withLock { _revision } }

    /// Whose the comic's file was at its last check: its directory listing shows them without
    /// looking at the file a second time.
    var permissions: SourcePermissions? {
        get { lock.withLock { _permissions } }
        set {
            lock.withLock {
                if _permissions != newValue { _revision = Self.nextRevision() }
                _permissions = newValue
            }
        }
    }

    var comicInfo: [UInt8]? {
        get { lock.withLock { _comicInfo } }
        set { lock.withLock { _comicInfo = newValue } }
    }

    /// Records the page a reader is on; returns the previous one.
    func moveTo(page: Int) -> Int {
        lock.withLock {
            let previous = _currentPage
            _currentPage = page
            return previous
        }
    }
}

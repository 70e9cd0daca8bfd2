import Foundation
import InkyCore

/// One comic of the mounted library: its file identity, the listing of the current generation
/// and the serial queue its page fetches run on (readers of one comic share its decoder; other
/// comics have their own queues and never wait on it).
final class ComicState: @unchecked Sendable {
    let relativePath: String
    let realPath: String
    let fetchQueue: DispatchQueue
    /// Held while listing, so concurrent lookups list once.
    let listingLock = NSLock()

    private let lock = NSLock()
    private var _identity: FileIdentity?
    /// Unique for the daemon's life, never per comic: a page's inode number is derived from
    /// (comic, generation, index), and a comic deleted and added back gets a new ComicState. Had
    /// its generations started again at 0, its new pages would have had the old pages' inode
    /// numbers, and the kernel would have served their cached (keep_cache) bytes of the old file.
    /// Only the same file coming back (same size, mtime and inode) resumes its old generation.
    private var _generation = ComicState.nextGeneration()
    private static let generations = GenerationCounter()
    private static func nextGeneration() -> Int { generations.next() }
    private var _listing: Result<ComicListing, ComicError>?
    private var _pageIndex: [String: Int] = [:]
    private var _comicInfo: [UInt8]?
    private var _currentPage = 0
    private var _recordedOnce = false
    private var _listedAt = Date.distantPast

    /// An I/O error while listing is the disk's, not the archive's: such a comic is listed
    /// again at a lookup this long after, so it recovers with the disk instead of at remount.
    static let ioErrorRetrySeconds = 5.0

    /// True once a read of this comic was recorded (the first read of page 0 counts too).
    var recordedOnce: Bool {
        get { lock.withLock { _recordedOnce } }
        set { lock.withLock { _recordedOnce = newValue } }
    }

    /// The identity and generation of this comic's previous state, dropped while its file was
    /// missing (renamed away and back, say): the same file again resumes that generation, so
    /// pages a reader holds open stay valid; another file starts a new one.
    private var _resumable: (identity: FileIdentity, generation: Int)?

    init(relativePath: String, realPath: String, resuming previous: (identity: FileIdentity, generation: Int)? = nil) {
        self.relativePath = relativePath
        self.realPath = realPath
        _resumable = previous
        fetchQueue = DispatchQueue(label: "inkyfs.comic")
    }

    /// What a later state of this comic may resume (nil before its file was seen).
    var resumable: (identity: FileIdentity, generation: Int)? {
        lock.withLock { _identity.map { ($0, _generation) } }
    }

    struct Snapshot {
        var identity: FileIdentity
        var generation: Int
        var listing: Result<ComicListing, ComicError>
    }

    var generation: Int { lock.withLock { _generation } }

    /// Compares the file with what was listed; a change starts a new generation. Returns the
    /// new identity and whether the generation moved.
    func refresh(_ identity: FileIdentity) -> Bool {
        lock.withLock {
            guard _identity != identity else { return false }
            let changed = _identity != nil
            if !changed, let previous = _resumable, previous.identity == identity { _generation = previous.generation }
            _resumable = nil
            _identity = identity
            if changed { _generation = Self.nextGeneration() }
            _listing = nil
            _pageIndex = [:]
            _comicInfo = nil
            return changed
        }
    }

    func snapshot() -> Snapshot? {
        lock.withLock {
            guard let identity = _identity, let listing = _listing else { return nil }
            if case .failure(.io) = listing, Date().timeIntervalSince(_listedAt) > Self.ioErrorRetrySeconds { return nil }
            return Snapshot(identity: identity, generation: _generation, listing: listing)
        }
    }

    /// Stores a listing made for `identity`; ignored when the file moved on meanwhile.
    func store(_ listing: Result<ComicListing, ComicError>, for identity: FileIdentity) {
        lock.withLock {
            guard identity == _identity else { return }
            _listing = listing
            _listedAt = Date()
            if case .success(let value) = listing {
                _pageIndex = Dictionary(value.pages.map { ($0.name, $0.number) }, uniquingKeysWith: { first, _ in first })
            }
        }
    }

    /// Replaces a good listing by the error that reading it ran into (a dead parser).
    func markFailed(_ error: ComicError, generation: Int) {
        lock.withLock {
            guard generation == _generation else { return }
            _listing = .failure(error)
            _pageIndex = [:]
        }
    }

    /// Keeps sizes learned by rendering pages of `generation`; returns the listing (and the
    /// identity it belongs to) to store in the index, nil when the comic moved on.
    func learn(sizes: [Int: Int64], generation: Int) -> (ComicListing, FileIdentity)? {
        lock.withLock {
            guard generation == _generation, let identity = _identity, case .success(let listing) = _listing else { return nil }
            let updated = listing.learning(sizes: sizes)
            _listing = .success(updated)
            return (updated, identity)
        }
    }

    func pageNumber(named name: String) -> Int? { lock.withLock { _pageIndex[name] } }

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

private final class GenerationCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var last = 0

    func next() -> Int {
        lock.withLock {
            last += 1
            return last
        }
    }
}

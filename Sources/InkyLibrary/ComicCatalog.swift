import Foundation
import InkyCore
import InkyTree

/// The comics and folders the mounted library knows, checked against the disk at each use: a
/// folder's index is rebuilt when its mtime moves, a comic whose file changed starts a new
/// generation, and a comic not listed yet is listed (from the index, else by a worker).
extension LibraryFilesystem {
    func folderIndex(_ path: String) -> Result<FolderIndex, Errno> {
        let identity: FileIdentity
        switch sourceStatus(path, type: S_IFDIR) {
        case .success(let value): identity = FileIdentity(value)
        case .failure(let code): return .failure(code)
        }
        if let index = lock.withLock({ folders[path] }), index.identity == identity { return .success(index) }
        return FolderIndex.build(root: root, relativePath: path, identity: identity).map { index in
            lock.withLock { folders[path] = index }
            return index
        }
    }

    func comicState(_ comic: ComicRef) -> ComicState? {
        lock.withLock { comics[comic] }
    }

    /// The comic's state after checking the file on disk: vanished → ENOENT, changed → a new
    /// generation (its old pages dropped), unlisted → listed now, through the backend.
    func currentComic(_ comic: ComicRef) -> Result<(ComicState, ComicState.Snapshot), Errno> {
        let real = realPath(comic)
        let identity: FileIdentity
        switch comicIdentity(comic) {
        case .success(let value): identity = value
        case .failure(let code):
            lock.withLock { comics[comic] = nil }
            cache.drop(comic: comic) { _ in true }
            return .failure(code)
        }
        let state = lock.withLock {
            if let existing = comics[comic] { return existing }
            let created = ComicState(comic: comic, realPath: real)
            comics[comic] = created
            return created
        }
        if state.refresh(identity) {
            let generation = state.generation
            cache.drop(comic: comic) { $0.generation != generation }
            logger("\(real) changed on disk: serving its new content")
        }
        if let snapshot = state.snapshot() { return .success((state, snapshot)) }
        state.listingLock.lock()
        defer { state.listingLock.unlock() }
        if let snapshot = state.snapshot() { return .success((state, snapshot)) }
        // The index knows library files only: a vault comic is never looked up or stored there.
        let indexed = libraryFile(comic).flatMap { file in self.state.map { (file, $0) } }
        if let (file, database) = indexed, let listing = database.indexedListing(file, identity: identity),
           Self.fits(listing, options.limits.rendering) {
            state.store(listing, for: identity)
        } else {
            lock.withLock { _backendListings += 1 }
            do throws(ComicError) {
                let (listing, listedIdentity) = try backend.list(real, limits: options.limits)
                if listedIdentity != identity {
                    // Changed while being listed: the next lookup starts over with the new file.
                    _ = state.refresh(listedIdentity)
                }
                state.store(.success(listing), for: listedIdentity)
                if let (file, database) = indexed { database.storeListing(file, identity: listedIdentity, .success(listing)) }
            } catch {
                // Vault object paths are random hex, and a vault comic's error details stay out.
                logger("cannot open \(loggable(error, of: comic))")
                state.store(.failure(error), for: identity)
                if let (file, database) = indexed { database.storeListing(file, identity: identity, .failure(error)) }
            }
        }
        guard let snapshot = state.snapshot() else { return .failure(.EIO) }
        return .success((state, snapshot))
    }

    /// The comic's snapshot if `generation` is still current; ESTALE for pages of a changed file.
    func sameGeneration(_ comic: ComicRef, _ generation: Int) -> Result<ComicState.Snapshot, Errno> {
        currentComic(comic).flatMap { _, snapshot in
            snapshot.generation == generation ? .success(snapshot) : .failure(.ESTALE)
        }
    }

    /// ERROR.txt's text for a comic that shows no pages, nil for a readable one.
    static func errorText(_ listing: Result<ComicListing, ComicError>, path: String) -> String? {
        switch listing {
        case .failure(let error):
            return "inkyfs cannot show this comic.\n\n\(error.message)\n"
        case .success(let value) where value.pages.isEmpty:
            return "inkyfs cannot show this comic.\n\n\(ComicError.noPages(path: path).message)\n"
        case .success:
            return nil
        }
    }
}

/// The comics' states, least recently used first out once their listings pass a page budget:
/// a library of 100,000 comics keeps in memory only the comics in use, and a comic dropped here
/// is listed again from the index (no archive opened) when it is next looked up.
struct ComicStates {
    /// Pages (each a few hundred bytes of listing) kept at most; a comic counts one plus its pages.
    static let pageBudget = 100_000

    private var states: [ComicRef: (state: ComicState, lastUse: UInt64)] = [:]
    private var clock: UInt64 = 0

    var count: Int { states.count }

    subscript(comic: ComicRef) -> ComicState? {
        mutating get {
            guard let entry = states[comic] else { return nil }
            clock += 1
            states[comic] = (entry.state, clock)
            return entry.state
        }
        set {
            clock += 1
            states[comic] = newValue.map { ($0, clock) }
            if newValue != nil, clock % 256 == 0 { trim() }
        }
    }

    /// Removes the matching comics; returns their states.
    @discardableResult
    mutating func removeAll(where shouldRemove: (ComicRef) -> Bool) -> [ComicState] {
        let removed = states.filter { shouldRemove($0.key) }
        for comic in removed.keys { states[comic] = nil }
        return removed.values.map(\.state)
    }

    /// Drops the least recently used comics until the listings fit the budget again (to 90%,
    /// so trimming is rare). Vault comics stay until lock, which must find every one of them
    /// to make the kernel drop their pages.
    private mutating func trim() {
        var weight = states.values.reduce(0) { $0 + $1.state.weight }
        guard weight > Self.pageBudget else { return }
        for (comic, entry) in states.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where !comic.isVault {
            if weight <= Self.pageBudget * 9 / 10 { break }
            weight -= entry.state.weight
            states[comic] = nil
        }
    }
}

/// Folder indexes, least recently used first out past a budget of names, for the same reason.
struct FolderIndexCache {
    static let nameBudget = 100_000

    private var indexes: [String: (index: FolderIndex, lastUse: UInt64)] = [:]
    private var clock: UInt64 = 0
    private var names = 0

    subscript(path: String) -> FolderIndex? {
        mutating get {
            guard let entry = indexes[path] else { return nil }
            clock += 1
            indexes[path] = (entry.index, clock)
            return entry.index
        }
        set {
            clock += 1
            names -= indexes[path]?.index.names.count ?? 0
            indexes[path] = newValue.map { ($0, clock) }
            names += newValue?.names.count ?? 0
            if names > Self.nameBudget { trim() }
        }
    }

    private mutating func trim() {
        for (path, entry) in indexes.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            if names <= Self.nameBudget * 9 / 10 { break }
            names -= entry.index.names.count
            indexes[path] = nil
        }
    }
}

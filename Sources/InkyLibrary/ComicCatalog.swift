import Foundation
import InkyCore
import InkyTree
import InkyWorker
import Synchronization

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
        let recent = recentChecks
        return FolderIndex.build(root: root, relativePath: path, identity: identity,
                                 comicSuffix: options.comicsAsCBZ ? CBZFiles.suffix : "") { comic, info in
            recent.store(comic, ComicCheck(info))
        }.map { index in
            lock.withLock { folders[path] = index }
            return index
        }
    }

    func comicState(_ comic: ComicRef) -> ComicState? {
        lock.withLock { comics[comic] }
    }

    /// The comic's state after checking the file on disk: vanished → ENOENT, changed → a new
    /// generation (its old pages dropped), unlisted → listed now, through the backend.
    /// `known`: what listing ahead just learned of the comic (its file, and the index's row if
    /// it read the index for it: a folder's comics are read in one transaction), used instead
    /// of looking again.
    func currentComic(_ comic: ComicRef, known: KnownComic? = nil) -> Result<(ComicState, ComicState.Snapshot), Errno> {
        let real = realPath(comic)
        let identity: FileIdentity
        let permissions: SourcePermissions
        switch known.map({ .success($0.check) }) ?? comicCheck(comic) {
        case .success(let check): (identity, permissions) = (check.identity, check.permissions)
        case .failure(let code):
            if let gone = lock.withLock({ comics.remove(comic) }) { generations.dropped(gone) }
            cache.drop(comic: comic) { _ in true }
            return .failure(code)
        }
        let (state, outOfBudget) = lock.withLock { () -> (ComicState, [ComicState]) in
            if let existing = comics[comic] { return (existing, []) }
            let created = ComicState(comic: comic, realPath: real)
            return (created, comics.insert(created, for: comic))
        }
        for dropped in outOfBudget { generations.dropped(dropped) }
        state.permissions = permissions
        let (changed, before) = state.replace(identity, generations)
        if changed {
            let generation = state.generation
            cache.drop(comic: comic) { $0.generation != generation }
            logger("\(real) changed on disk: serving its new content")
            // Seen here before the watcher said so (or where it cannot see): the kernel still
            // holds the old pages' names. Told from another thread: this may be a request
            // about the comic's own directory, which the kernel locks until it is answered.
            if let before {
                dropResumePages(of: comic, before)
                DispatchQueue.global(qos: .utility).async { [weak self] in self?.forgetChildren(of: comic, before) }
            }
        }
        if let snapshot = state.snapshot() { return .success((state, snapshot)) }
        return state.listingLock.withLock { _ in
            if let snapshot = state.snapshot() { return .success((state, snapshot)) }
            // The index knows library files only: a vault comic is never looked up or stored there.
            let stored = libraryFile(comic).flatMap { file in self.state.map { (file, $0) } }
            let indexed = known.map(\.indexed) ?? stored.flatMap { file, database in database.indexedListing(file, identity: identity) }
            if let listing = indexed,
               Self.fits(listing, options.limits.rendering) {
                state.store(listing, for: identity)
            } else {
                lock.withLock { _backendListings += 1 }
                do throws(ComicError) {
                    let (listing, listedIdentity) = try backend.list(source(of: state), limits: options.limits)
                    if listedIdentity != identity {
                        // Changed while being listed: the next lookup starts over with the new file.
                        _ = state.refresh(listedIdentity, generations)
                    }
                    state.store(.success(listing), for: listedIdentity)
                    if let (file, _) = stored { indexWriter?.store(file, identity: listedIdentity, .success(listing)) }
                } catch {
                    // Vault object paths are random hex, and a vault comic's error details stay out.
                    logger(.error("cannot open \(loggable(error, of: comic))"))
                    state.store(.failure(error), for: identity)
                    if let (file, _) = stored { indexWriter?.store(file, identity: identity, .failure(error)) }
                }
            }
            // Listed now: the state weighs its pages.
            for dropped in lock.withLock({ comics.reweigh(comic) }) { generations.dropped(dropped) }
            guard let snapshot = state.snapshot() else { return .failure(.EIO) }
            return .success((state, snapshot))
        }
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

/// Values kept least recently used first out once their weights pass a budget: a library of
/// 100,000 comics keeps in memory only the comics and folders in use, and what is dropped here
/// is read again from the index or the disk (no archive opened) when next needed.
struct WeightedLRU<Key: Hashable, Value> {
    let budget: Int
    /// A value's weight when inserted; one whose weight grows later is weighed again with
    /// `reweigh` (a comic gets listed), and every value is weighed again before a trim.
    let weight: (Value) -> Int
    /// Entries that are never dropped for the budget.
    let pinned: (Key) -> Bool
    private var entries: [Key: (value: Value, lastUse: UInt64, weight: Int)] = [:]
    private var clock: UInt64 = 0
    /// The entries' weights as last weighed: trimming is looked at only when it passes
    /// `trimAbove`, not by weighing every entry (the catalog's lock is held meanwhile).
    private var total = 0
    private var trimAbove: Int

    init(budget: Int, weight: @escaping (Value) -> Int, pinned: @escaping (Key) -> Bool = { _ in false }) {
        self.budget = budget
        self.weight = weight
        self.pinned = pinned
        trimAbove = budget
    }

    subscript(key: Key) -> Value? {
        mutating get {
            guard let entry = entries[key] else { return nil }
            clock += 1
            entries[key]!.lastUse = clock
            return entry.value
        }
        set { insert(newValue, for: key) }
    }

    /// Sets the value for `key`; returns the values dropped for the budget, if any.
    @discardableResult
    mutating func insert(_ value: Value?, for key: Key) -> [Value] {
        clock += 1
        total -= entries[key]?.weight ?? 0
        guard let value else {
            entries[key] = nil
            return []
        }
        let weighed = weight(value)
        entries[key] = (value, clock, weighed)
        total += weighed
        return total > trimAbove ? trim() : []
    }

    /// `key`'s value weighs what it weighs now; returns the values dropped for the budget.
    @discardableResult
    mutating func reweigh(_ key: Key) -> [Value] {
        guard let entry = entries[key] else { return [] }
        let weighed = weight(entry.value)
        entries[key]!.weight = weighed
        total += weighed - entry.weight
        return total > trimAbove ? trim() : []
    }

    /// Every value, leaving their order of use alone.
    var values: [Value] { entries.values.map(\.value) }

    /// Removes `key`'s entry; returns its value.
    mutating func remove(_ key: Key) -> Value? {
        guard let entry = entries.removeValue(forKey: key) else { return nil }
        total -= entry.weight
        return entry.value
    }

    /// Removes the matching entries; returns their values.
    @discardableResult
    mutating func removeAll(where shouldRemove: (Key) -> Bool) -> [Value] {
        let removed = entries.filter { shouldRemove($0.key) }
        for (key, entry) in removed {
            entries[key] = nil
            total -= entry.weight
        }
        return removed.values.map(\.value)
    }

    /// Drops the least recently used entries until the rest fits the budget again (to 75%, so
    /// trimming is rare: each trim weighs and sorts every entry, under the filesystem's lock;
    /// trimming to 90% made it 10% of a 20,000-comic listing's time). The value used last stays,
    /// even alone over the budget: dropped at once, a folder of 20,000 links was read again from
    /// the index for each of the hundreds of READDIRPLUS requests that list it. What pinned
    /// entries keep over the budget is looked at again only once a quarter budget more is added.
    private mutating func trim() -> [Value] {
        total = 0
        for key in entries.keys {
            let weighed = weight(entries[key]!.value)
            entries[key]!.weight = weighed
            total += weighed
        }
        var dropped: [Value] = []
        if total > budget {
            for (key, entry) in entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where !pinned(key) && entry.lastUse != clock {
                if total <= budget * 3 / 4 { break }
                total -= entry.weight
                entries[key] = nil
                dropped.append(entry.value)
            }
        }
        trimAbove = max(budget, total + budget / 4)
        return dropped
    }
}

extension WeightedLRU where Key == ComicRef, Value == ComicState {
    /// Comic states under a budget of 100,000 pages (a few hundred bytes of listing each; a
    /// comic weighs one plus its pages). Vault comics stay until lock, which must find every one
    /// of them to make the kernel drop their pages.
    static func comicStates() -> Self { WeightedLRU(budget: 100_000, weight: \.weight, pinned: \.isVault) }
}

extension WeightedLRU where Key == String, Value == FolderIndex {
    /// Folder indexes under a budget of 100,000 names.
    static func folderIndexes() -> Self { WeightedLRU(budget: 100_000, weight: { $0.names.count + 1 }) }
}

/// What listing ahead learned of a comic before asking for it: its file, and the index's row
/// for it (nil: the index has none for this file as it is).
struct KnownComic: Sendable {
    var check: ComicCheck
    var indexed: Result<ComicListing, ComicError>?
}

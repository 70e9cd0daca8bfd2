import Foundation
import InkyCore
import InkyTree
import InkyWorker
import Synchronization

/// Background listing of a folder's comics, several at once: `ls -l` (or a file manager) of a
/// fresh library looks up every comic of a folder one after another, and each lookup would
/// otherwise wait for its own archive to be opened in a worker while the other workers idle.
private let listingAheadQueue = DispatchQueue(label: "inkyfs.list-ahead", attributes: .concurrent)
/// The folders being read now, loaded one after another. A serial queue always gets a thread
/// (libdispatch's concurrent queues get about one per CPU): on the concurrent queue, the library
/// listed ahead after mounting held both threads for its first seconds, and the first 45 series
/// of a warm listing were loaded by each comic's own request instead.
private let folderAheadQueue = DispatchQueue(label: "inkyfs.folder-ahead")

/// The library's comics to list, in walk order, produced folder by folder as the listing
/// threads ask (a large library starts listing at once, not after a whole walk). Comics the
/// index holds as they are on disk are passed over, found for a whole folder in one read.
private final class LibraryComics: Sendable {
    private enum Item: Sendable {
        case folder(String)
        case comic(ComicRef, KnownComic?)
    }

    private weak let filesystem: LibraryFilesystem?
    private struct Walk {
        /// Folders and comics not yet visited, the next one last.
        var pending: [Item] = [.folder("")]
        /// Folders listed so far: one met again (a bind mount of an ancestor) is not walked twice.
        /// Links are never entered: they are `.link` nodes, not folders.
        var seen = Set<FileIdentity>()
        /// Comics met, listed or not.
        var count = 0
    }
    /// Held while a folder is walked: the listing threads take the comics one at a time.
    private let walk = Mutex(Walk())
    var count: Int { walk.withLock { $0.count } }

    init(_ filesystem: LibraryFilesystem) { self.filesystem = filesystem }

    func next() -> (ComicRef, KnownComic?)? {
        walk.withLock { walk in
            while let item = walk.pending.popLast() {
                switch item {
                case .comic(let comic, let known):
                    return (comic, known)
                case .folder(let path):
                    guard let filesystem, case .success(let index) = filesystem.folderIndex(path),
                          walk.seen.insert(index.identity).inserted else { continue }
                    let nodes = Array(index.nodes)
                    let comics = nodes.compactMap { node -> ComicRef? in
                        if case .comic(let comic) = node { comic } else { nil }
                    }
                    walk.count += comics.count
                    let toList = filesystem.toList(comics)
                    walk.pending += nodes.reversed().compactMap { node -> Item? in
                        switch node {
                        case .comic(let comic): toList.index(forKey: comic).map { .comic(comic, toList[$0].value) }
                        case .folder(let path): .folder(path)
                        default: nil
                        }
                    }
                }
            }
            return nil
        }
    }
}

/// The comics still to list, shared by the listing threads of one folder, with what was
/// learned of each while looking for it in the index.
private final class ComicsToList: Sendable {
    private let comics: Mutex<[(ComicRef, KnownComic?)]>

    init(_ comics: [(ComicRef, KnownComic?)]) { self.comics = Mutex(comics.reversed()) }

    func next() -> (ComicRef, KnownComic?)? { comics.withLock { $0.popLast() } }
}

extension LibraryFilesystem {
    /// Starts listing the unlisted comics of folder `node` in the background, up to
    /// `options.listingParallelism` at a time, in name order; returns at once. A lookup that
    /// arrives meanwhile waits for that comic's listing (its listing lock) instead of repeating it.
    /// The comics of the folder after it, which `ls -R` and a file manager's walk enter next, are
    /// loaded from the index too: they are then loaded before they are asked for, not while.
    public func listComicsAhead(in node: Node) {
        guard options.listingParallelism > 1, case .folder(let path) = node else { return }
        folderAheadQueue.async { [weak self] in
            ThreadCPUs.widenToProcess()
            guard let self else { return }
            self.listFolderAhead(path, indexedOnly: false)
            if let next = self.nextFolderOfComics(after: path) { self.listFolderAhead(next, indexedOnly: true) }
        }
    }

    /// Lists the unlisted comics of folder `path`: those the index holds loaded from it, the
    /// others (unless `indexedOnly`) by workers.
    private func listFolderAhead(_ path: String, indexedOnly: Bool) {
        guard !isStopping, case .success(let index) = folderIndex(path) else { return }
        let unlisted: [ComicRef] = index.nodes.compactMap { node -> ComicRef? in
            guard case .comic(let comic) = node, comicState(comic)?.snapshot() == nil else { return nil }
            return comic
        }
        guard unlisted.count > 1 else { return }
        let rest = loadIndexed(unlisted)
        guard !rest.isEmpty, !indexedOnly else { return }
        let work = ComicsToList(rest)
        listInBackground(threads: min(options.listingParallelism, rest.count), next: work.next)
    }

    /// The folder of comics a depth-first walk (`ls -R`, a file manager's search) enters after
    /// listing `path`: its first subfolder, else the folder after it, climbing out of folders
    /// whose last subfolder it is; a folder of folders on the way (a publisher's) is entered
    /// down to its first folder. Without the climb, the first series of every publisher was
    /// loaded only once `ls` was in it, one comic at a time.
    private func nextFolderOfComics(after path: String) -> String? {
        var next = firstSubfolder(of: path)
        var climbing = path
        while next == nil, !climbing.isEmpty {
            next = folder(after: climbing)
            climbing = FolderIndex.folder(holding: climbing)
        }
        // A few levels down at most: a library nests publisher, series, perhaps volume.
        for _ in 0..<4 {
            guard let folder = next, case .success(let index) = folderIndex(folder),
                  !index.nodes.contains(where: { if case .comic = $0 { true } else { false } }) else { break }
            next = firstSubfolder(of: folder)
        }
        return next
    }

    private func firstSubfolder(of path: String) -> String? {
        guard case .success(let index) = folderIndex(path) else { return nil }
        return index.nodes.compactMap { node -> String? in
            if case .folder(let sub) = node { sub } else { nil }
        }.first
    }

    /// The folder after `path` among its parent's entries, if its parent's index is at hand.
    private func folder(after path: String) -> String? {
        guard !path.isEmpty else { return nil }
        guard case .success(let index) = folderIndex(FolderIndex.folder(holding: path)),
              case let nodes = index.nodes, let at = nodes.firstIndex(of: .folder(path)) else { return nil }
        return nodes[(at + 1)...].lazy.compactMap { node -> String? in
            if case .folder(let next) = node { next } else { nil }
        }.first
    }

    /// Loads the comics the index holds as they are on disk, from one read of the index, and
    /// returns the others, in their order, with what was learned of them. `ls -lR` of a folder
    /// enters its comics next: each then finds its listing loaded instead of reading the index
    /// itself while `ls` waits.
    private func loadIndexed(_ comics: [ComicRef]) -> [(ComicRef, KnownComic?)] {
        guard let database = state else { return comics.map { ($0, nil) } }
        // A mount numbers them in one read of the database, before their replies are made: the
        // folder after the one listed has not been listed itself, and numbering each comic alone
        // was a third of this work.
        changeObserver?.willList(comics)
        let checked = checkedForIndex(comics)
        var learned: [ComicRef: KnownComic] = [:]
        for (one, listing) in zip(checked, database.indexedListings(checked.map { ($0.file, $0.check.identity) })) {
            guard !isStopping else { return [] }
            let known = KnownComic(check: one.check, indexed: listing)
            if listing != nil {
                // One its own request listed meanwhile (the walk got ahead) needs no reply made.
                if comicState(one.comic)?.snapshot() != nil { continue }
                if case .success(let (state, _)) = currentComic(one.comic, known: known) {
                    listingReady(one.comic, state)
                    continue
                }
            }
            learned[one.comic] = known
        }
        let looked = Set(checked.map(\.comic))
        // Loaded: looked at and not learned of. Not looked at (a vault comic, a vanished file): nothing known.
        return comics.compactMap { comic in looked.contains(comic) ? learned[comic].map { (comic, $0) } : (comic, nil) }
    }

    /// The comics whose file could be looked at, with what the index is keyed by, for one read
    /// of the index for them all.
    private func checkedForIndex(_ comics: [ComicRef]) -> [(comic: ComicRef, file: LibraryFile, check: ComicCheck)] {
        comics.compactMap { comic in
            guard let file = libraryFile(comic), case .success(let check) = listedComicCheck(comic) else { return nil }
            return (comic, file, check)
        }
    }

    /// Lists every comic of the library in the background, depth first in name order (the
    /// order `ls -R`, `find` or a file manager's search reaches them), with one worker fewer
    /// than `listingParallelism` so a page read always finds one free. A first browse of a
    /// library then finds the comics listed instead of waiting for each in turn; comics the
    /// index knows cost no archive opening. A lookup that meets a comic being listed waits for
    /// that listing instead of repeating it. Returns at once; `finished` gets the count.
    public func listLibraryAhead(finished: @escaping @Sendable (Int, TimeInterval) -> Void = { _, _ in }) {
        guard isFolderLibrary, options.listLibraryAhead else { return }
        let started = Date()
        let threads = max(1, options.listingParallelism - 1)
        let walk = LibraryComics(self)
        let group = DispatchGroup()
        listInBackground(threads: threads, group: group, next: walk.next)
        group.notify(queue: listingAheadQueue) { finished(walk.count, Date().timeIntervalSince(started)) }
    }

    /// `threads` loops on the listing queue, each listing the comics `next` hands out until it
    /// has none (or the mount is ending); a comic listed meanwhile is passed over.
    private func listInBackground(threads: Int, group: DispatchGroup? = nil, next: @escaping @Sendable () -> (ComicRef, KnownComic?)?) {
        for _ in 0..<threads {
            listingAheadQueue.async(group: group) { [weak self] in
                ThreadCPUs.widenToProcess()
                while let (comic, known) = next() {
                    guard let self, !self.isStopping else { return }
                    if self.comicState(comic)?.snapshot() == nil { _ = self.currentComic(comic, known: known) }
                }
            }
        }
    }

    /// Of one folder's comics, those the library walk lists: neither in memory nor in the index
    /// as they are on disk (listing them ahead would only decode what a lookup decodes anyway,
    /// and push comics in use out of memory), with what was learned of each.
    fileprivate func toList(_ comics: [ComicRef]) -> [ComicRef: KnownComic?] {
        let unlisted = comics.filter { comicState($0)?.snapshot() == nil }
        let checked = checkedForIndex(unlisted)
        // Not looked at (a vanished file): listed, to find out why.
        var found = Dictionary(uniqueKeysWithValues: unlisted.map { ($0, KnownComic?.none) })
        let indexed = state?.areIndexed(checked.map { ($0.file, $0.check.identity) }) ?? Array(repeating: false, count: checked.count)
        for (one, isIndexed) in zip(checked, indexed) {
            if isIndexed {
                found.removeValue(forKey: one.comic)
            } else {
                found[one.comic] = KnownComic(check: one.check, indexed: nil)
            }
        }
        return found
    }

    /// A mount of one comic file will be asked for that comic's pages first: list it now, while
    /// the mount is still being set up, instead of when the first `ls` arrives.
    public func listSingleComicAhead() {
        guard !isFolderLibrary else { return }
        listingAheadQueue.async { [weak self] in _ = self?.currentComic(.library("")) }
    }

    /// A directory entry's attributes when they cost no archive opening, for readdirplus: every
    /// entry given here is one LOOKUP round trip less for `ls -l` or a recursive walk. A comic
    /// not listed yet is a directory whatever its archive holds: its attributes come from the
    /// archive file's own, as a listed one's are. nil for the rest (virtual folders), which the kernel looks up.
    public func attributesWithoutListing(of node: Node) -> NodeAttributes? {
        switch node {
        case .page(let path, let generation, let index):
            // A page rendered on demand has no size until its first lookup renders it: a
            // directory listing never renders, so that page is left to its lookup.
            guard case .success(let snapshot) = sameGeneration(path, generation), case .success(let listing) = snapshot.listing,
                  index < listing.pages.count, listing.pages[index].isSizeKnown else { return nil }
            return try? attributes(of: node).get()
        case .comicInfo, .errorText, .folder, .file, .link:
            return try? attributes(of: node).get()
        case .comic(let comic):
            // The archive's own look is the comic's directory's, listed or not: a change it
            // shows is taken up when the comic itself is next asked for.
            guard case .success(let check) = listedComicCheck(comic) else { return nil }
            return comicAttributes(comic, check.identity, check.permissions)
        default:
            return nil
        }
    }
}

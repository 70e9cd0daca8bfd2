import Foundation
import InkyCore
import Synchronization

/// The comics and folders the mounted library knows, in memory under a budget (`WeightedLRU`):
/// folders' indexes as last read, comics' states (listing, generation, permissions), the
/// generations of comics whose states were dropped, and how many comics the backend listed.
///
/// It holds what was learned and nothing of how: `LibraryFilesystem.currentComic` decides when
/// to learn again (the file changed, the comic was never listed) and asks the index or a worker.
/// Its lock is held only to look up, add, weigh or drop, never while the disk is read or a comic
/// listed (each comic's listing has its own: `ComicState.listingLock`).
final class ComicCatalog: Sendable {
    private struct State {
        var folders = WeightedLRU.folderIndexes()
        /// Each folder's subdirectory count as its index last found it, kept after the budget
        /// let the index go: a folder's `stat` (its link count) then needs no new reading of
        /// the folder. The kernel asks for it after every listing on a mount that is not `ro`.
        var subdirectories: [String: (identity: FileIdentity, count: Int)] = [:]
        var comics = WeightedLRU.comicStates()
        /// Comics listed by the backend (not the index) since the mount.
        var backendListings = 0
    }
    private let state: Mutex<State>
    /// The generations comics' pages are numbered with, kept past their states.
    let generations = ComicGenerations()
    private let root: LibraryRoot
    /// ".cbz" when comics are served as CBZ files (`FolderIndex`), else "".
    private let comicSuffix: String
    /// Where a folder's listing leaves what it saw of each comic (`RecentComicChecks`).
    private let recentChecks: RecentComicChecks

    init(root: LibraryRoot, comicSuffix: String, recentChecks: RecentComicChecks) {
        state = Mutex(State())
        self.root = root
        self.comicSuffix = comicSuffix
        self.recentChecks = recentChecks
    }

    /// The index of the library folder `path`, now at `identity`: the one kept, unless the
    /// folder changed since (its mtime moves on every add, delete and rename), then read again.
    func folderIndex(_ path: String, identity: FileIdentity) -> Result<FolderIndex, Errno> {
        if let index = state.withLock({ $0.folders[path] }), index.identity == identity { return .success(index) }
        let recent = recentChecks
        return FolderIndex.build(root: root, relativePath: path, identity: identity, comicSuffix: comicSuffix) { comic, info in
            recent.store(comic, ComicCheck(info))
        }.map { index in
            state.withLock { state in
                state.folders[path] = index
                if state.subdirectories.count >= Self.subdirectoryCountsKept && state.subdirectories[path] == nil {
                    state.subdirectories.removeAll(keepingCapacity: true)
                }
                state.subdirectories[path] = (identity, index.subdirectories)
            }
            return index
        }
    }

    /// Forgets the indexes of the folders holding `paths` and of those at or beneath them (""
    /// is every folder): the watcher saw them change, and what a folder's listing saw of a
    /// comic rewritten in place (its mtime, its modes) is kept in its index.
    func forgetFolders(holding paths: Set<String>) {
        guard !paths.isEmpty else { return }
        let holding = Set(paths.map(FolderIndex.folder(holding:)))
        state.withLock { state in
            let all = paths.contains("")
            state.folders.removeAll { folder in all || holding.contains(folder) || RecentComicChecks.isAtOrBeneath(paths, folder) }
        }
    }

    /// Folders whose subdirectory counts are kept: a few MiB at most (when full, all go).
    static let subdirectoryCountsKept = 65_536

    /// How many subdirectories the library folder `path`, now at `identity`, shows: as last
    /// counted, unless the folder changed since, then read again.
    func subdirectoryCount(_ path: String, identity: FileIdentity) -> Result<Int, Errno> {
        if let known = state.withLock({ $0.subdirectories[path] }), known.identity == identity { return .success(known.count) }
        return folderIndex(path, identity: identity).map(\.subdirectories)
    }

    /// `comic`'s state, nil when none is kept (never looked up, vanished, or out of the budget).
    func comic(_ comic: ComicRef) -> ComicState? {
        state.withLock { $0.comics[comic] }
    }

    /// `comic`'s state, made (not listed yet) when none is kept; what the new one pushes out of
    /// the budget leaves its generation behind.
    func comic(_ comic: ComicRef, readFrom realPath: String) -> ComicState {
        let (found, outOfBudget) = state.withLock { state -> (ComicState, [ComicState]) in
            if let existing = state.comics[comic] { return (existing, []) }
            let created = ComicState(comic: comic, realPath: realPath)
            return (created, state.comics.insert(created, for: comic))
        }
        for dropped in outOfBudget { generations.dropped(dropped) }
        return found
    }

    /// Drops `comic`'s state (its file vanished), keeping its generation: the kernel may still
    /// hold its pages' numbers.
    func vanished(_ comic: ComicRef) {
        if let gone = state.withLock({ $0.comics.remove(comic) }) { generations.dropped(gone) }
    }

    /// `comic` was listed: its state weighs its pages now, and may push others out.
    func listed(_ comic: ComicRef) {
        for dropped in state.withLock({ $0.comics.reweigh(comic) }) { generations.dropped(dropped) }
    }

    /// Drops every vault comic's state and returns them (at unlock and lock). No generation is
    /// kept for them: no vault name may outlive the unlock (`ComicGenerations`).
    @discardableResult
    func dropVaultComics() -> [ComicState] {
        state.withLock { state in state.comics.removeAll { $0.isVault } }
    }

    /// Counts a comic listed by the backend: the cost a warm index saves.
    func listedByBackend() {
        state.withLock { $0.backendListings += 1 }
    }

    /// Comics listed by the backend (not the index) since the mount.
    var backendListings: Int { state.withLock { $0.backendListings } }
}

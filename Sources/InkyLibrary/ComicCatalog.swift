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
            state.withLock { $0.folders[path] = index }
            return index
        }
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

import InkyCore
import InkyTree

/// What a tree of directories needs beyond names and bytes: where `..` leads, the hint that a
/// folder was listed, and the stamps under which a comic's listing may be replied ahead.
extension LibraryFilesystem {
    /// The directory `..` names in a listing of `node`: the root is its own parent, and
    /// `Vault/`'s is the root too.
    public func parent(of node: Node) -> Node {
        let up = FolderIndex.folder(holding:)
        switch node {
        case .folder(let path) where !path.isEmpty:
            return .folder(up(path))
        case .comic(.library(let path)) where !path.isEmpty:
            return .folder(up(path))
        case .comic(.vault(let name)):
            guard let entry = vault.entries?.first(where: { $0.name == name }) else { return .vaultFolder("") }
            return .vaultFolder(up(entry.displayPath))
        case .vaultFolder(let folder) where !folder.isEmpty:
            return .vaultFolder(up(folder))
        default:
            return rootNode
        }
    }

    /// Folder `node` was listed from its start: its comics are listed ahead (`ListingAhead`).
    public func directoryListed(_ node: Node) {
        listComicsAhead(in: node)
    }

    /// A library comic's directory: its file checked as a listing checks it, then what its
    /// entries are made from. Vault comics' are listed at each request: their names are not
    /// kept encoded anywhere.
    public func listingStamp(of node: Node) -> ListingStamp? {
        guard case .comic(let comic) = node, !comic.isVault, let state = comicState(comic),
              case .success(let check) = listedComicCheck(comic) else { return nil }
        // The file as its state last saw it, the common case: nothing to take up.
        if let (snapshot, revision, permissions) = state.stampedSnapshot(), snapshot.identity == check.identity, permissions == check.permissions {
            return listingStamp(generation: snapshot.generation, revision: revision)
        }
        guard case .success(let (state, snapshot)) = currentComic(comic) else { return nil }
        return listingStamp(generation: snapshot.generation, revision: state.revision)
    }

    private func listingStamp(generation: Int, revision: Int) -> ListingStamp {
        ListingStamp(generation, revision, Int(treeTimeout * 1000), Int(pageEntryTimeout * 1000), Int(options.pageAttributeTimeout * 1000))
    }

    /// Hands a library comic just loaded to the observer, which may make its directory's reply
    /// now: its entries and stamp from one look at its state.
    func listingReady(_ comic: ComicRef, _ state: ComicState) {
        guard !comic.isVault, let observer = changeObserver, let (snapshot, revision, permissions) = state.stampedSnapshot() else { return }
        observer.comicListed(comic, stamp: listingStamp(generation: snapshot.generation, revision: revision)) { numbered in
            comicEntries(comic, snapshot, permissions ?? comicPermissions(comic), numbered: numbered)
        }
    }
}

import InkyCore
import InkyTree

/// The library as the FUSE adapter sees it: the tree protocol over the filesystem's methods.
extension LibraryFilesystem: MountedFilesystem {
    public var sourcePath: String { libraryPath }

    public func attributesWithoutListing(of entry: DirectoryEntry) -> NodeAttributes? {
        entry.attributes ?? attributesWithoutListing(of: entry.id)
    }

    public func directoryListed(_ id: NodeID) {
        listComicsAhead(in: id)
    }

    /// A library comic's directory: its file checked as a listing checks it, then what its
    /// entries are made from. Vault comics' are listed at each request: their names are not
    /// kept encoded anywhere.
    public func listingStamp(of id: NodeID) -> ListingStamp? {
        guard case .comic(let comic)? = nodes.node(id), !comic.isVault, let state = comicState(comic),
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

    /// Hands a library comic just loaded to the adapter, which encodes its directory's reply
    /// now: its entries and stamp from one look at its state.
    func listingReady(_ comic: ComicRef, _ state: ComicState) {
        guard !comic.isVault, let observer = changeObserver, let (snapshot, revision, permissions) = state.stampedSnapshot() else { return }
        observer.comicListed(comic, stamp: listingStamp(generation: snapshot.generation, revision: revision),
                             entries: comicEntries(comic, snapshot, permissions ?? comicPermissions(comic)))
    }
}

import InkyCore
import InkyTree

/// The library as the FUSE adapter sees it: the tree protocol over the filesystem's methods.
extension LibraryFilesystem: MountedFilesystem {
    public var sourcePath: String { libraryPath }

    public func attributesWithoutListing(of entry: DirectoryEntry) -> NodeAttributes? {
        entry.attributes ?? attributesWithoutListing(of: entry.id)
    }

    public func remember(_ entry: DirectoryEntry) {
        nodes.remember(entry.id)
    }

    public func directoryListed(_ id: NodeID) {
        listComicsAhead(in: id)
    }

    /// A library comic's directory: its file checked as a listing checks it, then what its
    /// entries are made from. Vault comics' are listed at each request: their names are not
    /// kept encoded anywhere.
    public func listingStamp(of id: NodeID) -> ListingStamp? {
        guard case .comic(let comic)? = nodes.node(id), !comic.isVault,
              case .success(let (state, snapshot)) = currentComic(comic) else { return nil }
        return ListingStamp(snapshot.generation, state.revision,
                            Int(treeTimeout * 1000), Int(pageEntryTimeout * 1000), Int(options.pageAttributeTimeout * 1000))
    }

    public func forget(_ id: NodeID, count: UInt64) {
        nodes.forget(id, count: count)
    }
}

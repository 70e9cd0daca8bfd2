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

    public func forget(_ id: NodeID, count: UInt64) {
        nodes.forget(id, count: count)
    }
}

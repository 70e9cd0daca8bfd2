/// What a directory's listing was made from, as the tree tells it: two equal stamps of one
/// directory mean the same entries with the same attributes. The adapter keeps a reply encoded
/// ahead under it, and sends it only while the tree still gives the same stamp.
public struct ListingStamp: Hashable, Sendable {
    private let values: [Int]

    public init(_ values: Int...) { self.values = values }
}

extension MountedFilesystem {
    /// Directories are listed anew at each request unless the tree says otherwise.
    public func listingStamp(of id: NodeID) -> ListingStamp? { nil }
}

extension KernelCacheInvalidating {
    public func listingReady(_ id: NodeID, stamp: ListingStamp, entries: [DirectoryEntry]) {}
}

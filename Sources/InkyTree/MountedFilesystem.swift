import InkyCore

/// The number the kernel knows a node by (`fuse_ino_t`). The root is always 1.
public typealias NodeID = UInt64

/// What the FUSE adapter serves: the mount's trees composed (`MountComposition`, over `TreeView`s),
/// nodes it can look up, list, open and read, and remove one kind of entry from (`unlink`: the
/// one write a tree may accept). The adapter knows no library, vault, store or worker; the
/// daemon hands it one of these and it maps requests onto it.
///
/// Every answer is a `Result` with a POSIX error number: the adapter replies with it as is.
public protocol MountedFilesystem: AnyObject, Sendable {
    /// The folder the mount shows, for `statfs` and the mount's fsname.
    var sourcePath: String { get }
    /// Set by the adapter while mounted, so the trees can tell the kernel what changed.
    var kernelCache: (any KernelCacheInvalidating)? { get set }

    /// Looks `name` up in `parent`. The kernel keeps the answer's node until it FORGETs it: its
    /// number must lead to the same node as long as the mount lives. Every tree computes its
    /// numbers from what a node stands for, so the adapter counts no reference and tells none.
    func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno>
    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno>
    /// A directory's entries, without `.` and `..`.
    func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno>
    /// The attributes of a listed entry if they cost nothing to know (readdirplus); nil sends
    /// the entry without, and the kernel looks it up by name.
    func attributesWithoutListing(of entry: DirectoryEntry) -> NodeAttributes?
    /// The directory `..` names in a listing of `id`.
    func parent(of id: NodeID) -> NodeID
    /// A directory was listed from its start: a hint that its children are wanted next.
    func directoryListed(_ id: NodeID)
    /// The stamp of directory `id`'s listing as it is now (`ListingStamp`), after the same
    /// checks a listing makes; nil for a directory whose replies are not made ahead.
    func listingStamp(of id: NodeID) -> ListingStamp?

    /// Opens `id` for `caller` (the kernel's request context).
    func open(_ id: NodeID, caller: Caller) -> Result<OpenedFile, Errno>
    /// Reads `size` bytes at `offset` for `caller`; `completion` runs at once or later, on any thread.
    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?, caller: Caller,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void)
    func release(_ id: NodeID)
    func readLink(_ id: NodeID) -> Result<String, Errno>
    func extendedAttributes(of id: NodeID) -> [String: [UInt8]]
    /// Removes `name` from directory `parent` for `caller` (`rm`). Every tree is read-only
    /// (EROFS) but where a view accepts it: `Continue Reading/`'s links, which forget a comic's
    /// reading state. The kernel has looked the name up and checked modes before asking.
    func unlink(parent: NodeID, name: String, caller: Caller) -> Result<Void, Errno>
}

extension MountedFilesystem {
    /// Read-only: nothing is removed.
    public func unlink(parent: NodeID, name: String, caller: Caller) -> Result<Void, Errno> { .failure(.EROFS) }
}

/// What the kernel may have cached and must forget when the tree changes underneath.
/// The FUSE layer implements it with libfuse's invalidation notifications.
public protocol KernelCacheInvalidating: Sendable {
    func invalidateEntry(parent: NodeID, name: String)
    func invalidateNode(_ id: NodeID)
    /// Directory `id` was loaded in the background, before the kernel asked for it, with these
    /// entries under this stamp: its reply may be encoded now, off the requester's CPU
    /// (`listingStamp` tells later whether it holds). Handed over rather than asked for again,
    /// which checked the comic's file twice more.
    func listingReady(_ id: NodeID, stamp: ListingStamp, entries: [DirectoryEntry])
}

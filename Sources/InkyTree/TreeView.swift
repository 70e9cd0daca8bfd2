import Foundation
import InkyCore
import Synchronization

/// Which tree a node belongs to: the top byte of its number. 0 is the base tree (the library's
/// folders, rooted at the mount's root); 1...255 are views shown as folders at the mount root.
/// A view numbers its nodes in the 56 bits below as it likes, from what they stand for: the
/// composition routes by this byte and keeps no table.
public struct ViewSlot: Hashable, Sendable {
    public static let base = ViewSlot(0)
    public static let localBits: UInt64 = 56
    public static let localMask: NodeID = 1 << localBits - 1

    public let number: UInt8

    public init(_ number: UInt8) { self.number = number }

    /// The slot of any node number.
    public init(of id: NodeID) { number = UInt8(id >> Self.localBits) }

    /// The view's own folder at the mount root (local number 1).
    public var rootID: NodeID { id(1) }

    /// `local` must fit in 56 bits; 0 is never a node, 1 is the view's root.
    public func id(_ local: UInt64) -> NodeID {
        precondition(local <= Self.localMask, "a view's node number past 56 bits")
        return NodeID(number) << Self.localBits | local
    }

    public func local(_ id: NodeID) -> UInt64 { id & Self.localMask }

    public func contains(_ id: NodeID) -> Bool { ViewSlot(of: id) == self }
}

/// A tree the mount shows, the one protocol every tree answers: the base tree (slot 0, whose
/// root is the mount's root: the library), or a folder at the mount root with a tree under it
/// (`Continue Reading/`, `Vault/`, `By Series/`, ...). It answers only for numbers of its slot,
/// its root being `context.slot.rootID` (the mount's root for the base); the composition
/// (`MountComposition`) puts a view's folder in the root's listing while `isShown`, and hides a
/// library entry of the same name. What the kernel keeps is told through the context.
public protocol TreeView: AnyObject, Sendable {
    /// The root folder's name.
    var name: String { get }
    /// Whether the folder shows now: a view with nothing in it is not shown, `Vault/` only
    /// while unlocked. A change is told with `context.shownChanged()`.
    var isShown: Bool { get }
    /// `isShown` for a lookup of the folder's name at the root: a view whose first content is
    /// still being made may wait for it (bounded) rather than answer ENOENT, which the kernel
    /// would keep. The root's listing never waits (it asks `isShown`).
    func isShownWhenLookedUp() -> Bool
    /// What the attributes of `id` answer while the view is hidden: ENOENT, or EIO for a file
    /// a reader still holds open (`Vault/`'s pages after lock, whose reads fail with EIO; the
    /// kernel asks for a file's attributes before reading it again).
    func errnoWhileHidden(_ id: NodeID) -> Errno
    /// Once, before mounting.
    func attach(_ context: ViewContext)
    /// Before mounting, after `attach`: waits (until `deadline` at most) for content the view
    /// makes in the background, so the root's first listing shows it.
    func waitForFirstContent(until deadline: DispatchTime)

    func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno>
    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno>
    /// A directory's entries, without `.` and `..`.
    func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno>
    /// The attributes of a listed entry if they cost nothing to know (readdirplus); nil sends
    /// the entry without, and the kernel looks it up by name.
    func attributesWithoutListing(of entry: DirectoryEntry) -> NodeAttributes?
    /// The directory `..` names in a listing of `id`.
    func parent(of id: NodeID) -> NodeID
    /// The stamp of directory `id`'s listing as it is now (`ListingStamp`), after the same
    /// checks a listing makes; nil for a directory whose replies are not made ahead.
    func listingStamp(of id: NodeID) -> ListingStamp?
    func readLink(_ id: NodeID) -> Result<String, Errno>
    /// Opens `id` for this process (the mounting user: a view's files record no reader).
    func open(_ id: NodeID) -> Result<OpenedFile, Errno>
    /// Opens `id` for `caller` (the kernel's request context): the base tree tells readers apart.
    func open(_ id: NodeID, caller: Caller) -> Result<OpenedFile, Errno>
    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void)
    /// Reads for `caller`; `completion` runs at once or later, on any thread.
    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?, caller: Caller,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void)
    func release(_ id: NodeID)
    func extendedAttributes(of id: NodeID) -> [String: [UInt8]]
    func directoryListed(_ id: NodeID)
    /// `rm` of `name` in the view's directory `parent` by `caller`: EROFS unless the view
    /// accepts it (`MountedFilesystem.unlink`).
    func unlink(parent: NodeID, name: String, caller: Caller) -> Result<Void, Errno>
}

/// What a tree needs of the mount: its slot, the kernel's cache, and a way to say its folder
/// appeared or went.
public final class ViewContext: Sendable {
    public let slot: ViewSlot
    public let mountRootID: NodeID = 1
    private let _kernelCache = Mutex<(any KernelCacheInvalidating)?>(nil)
    private let name: String

    init(slot: ViewSlot, name: String) {
        self.slot = slot
        self.name = name
    }

    /// Set while mounted (by the composition, from the FUSE layer): where the tree's changes go,
    /// by number. The base tree tells it directly: it numbers the vault's nodes in `Vault/`'s slot too.
    public internal(set) var kernelCache: (any KernelCacheInvalidating)? {
        get { _kernelCache.withLock { $0 } }
        set { _kernelCache.withLock { $0 = newValue } }
    }

    /// Names in the view's folders (by the view's own number of each folder, `ViewSlot.local`)
    /// may stand for something else now, or nothing. Never from inside a request.
    public func namesChanged(_ names: [(parent: UInt64, name: String)]) {
        guard let kernel = kernelCache else { return }
        for (parent, name) in names { kernel.invalidateEntry(parent: slot.id(parent), name: name) }
    }

    /// The view's nodes (by their own numbers) changed: their attributes or listings.
    public func nodesChanged(_ locals: [UInt64]) {
        guard let kernel = kernelCache else { return }
        for local in locals { kernel.invalidateNode(slot.id(local)) }
    }

    /// The view's folder appeared or went: the kernel forgets the root's attributes (its link
    /// count counts the views' folders) and listing, and the root's name for the view when it
    /// went. One that appeared leaves the name alone: the kernel keeps no "no such name" (a
    /// lookup answered ENOENT is asked again), and a lookup that waited for the view's first
    /// tree holds the view itself, whose forgetting dropped everything listed under it. At
    /// 100,000 comics the first `ls -lR` was in `By Publisher/` when that came, and every later
    /// walk read a thousand links again.
    public func shownChanged(appeared: Bool) {
        guard let kernel = kernelCache else { return }
        if !appeared { kernel.invalidateEntry(parent: mountRootID, name: name) }
        kernel.invalidateNode(mountRootID)
    }
}

/// What most views answer: a read-only tree of folders and links with nothing to open.
public extension TreeView {
    func isShownWhenLookedUp() -> Bool { isShown }
    func errnoWhileHidden(_ id: NodeID) -> Errno { .ENOENT }
    func parent(of id: NodeID) -> NodeID { 1 }
    func readLink(_ id: NodeID) -> Result<String, Errno> { .failure(.EINVAL) }
    func open(_ id: NodeID) -> Result<OpenedFile, Errno> { .failure(.EISDIR) }
    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        completion(.failure(.EISDIR))
    }
    func release(_ id: NodeID) {}
    func extendedAttributes(of id: NodeID) -> [String: [UInt8]] { [:] }
    func directoryListed(_ id: NodeID) {}
    /// Views list their own folders at each request: nothing is made ahead.
    func listingStamp(of id: NodeID) -> ListingStamp? { nil }
    /// What the listing told, nothing more.
    func attributesWithoutListing(of entry: DirectoryEntry) -> NodeAttributes? { entry.attributes }
    /// A view is the mounting user's own and records nothing: who asked changes nothing.
    func open(_ id: NodeID, caller: Caller) -> Result<OpenedFile, Errno> { open(id) }
    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?, caller: Caller,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        read(id, offset: offset, size: size, descriptor: descriptor, completion: completion)
    }
    func unlink(parent: NodeID, name: String, caller: Caller) -> Result<Void, Errno> { .failure(.EROFS) }
}

extension TreeView {
    /// Views whose content is there from the start wait for nothing.
    public func waitForFirstContent(until deadline: DispatchTime) {}
}

import Foundation
import InkyCore

/// What the mount shows: the base tree (slot 0, whose root is the mount's root) with each
/// shown view's folder added at the root, every one a `TreeView`. Every request goes to the
/// tree whose slot its node number carries; only the root's listing, its lookups and its link
/// count are the composition's own. It is the FUSE adapter's one face (`MountedFilesystem`):
/// the adapter serves this, sets the kernel's cache here, and never learns what the trees are.
///
/// A base entry named like a shown view is hidden behind it: the view's folder is what the
/// name finds (a library folder called `Vault` shows again while the vault is locked). A view
/// not shown answers no lookup, attributes or listing; its open files still reach it (the
/// vault answers EIO for a page held open across lock).
public final class MountComposition: MountedFilesystem, Sendable {
    /// The folder the mount shows, for `statfs` and the mount's fsname.
    public let sourcePath: String
    private let base: any TreeView
    private let baseContext: ViewContext
    /// Views in the order they were given, each with its context: view i has slot i + 1, and
    /// the root lists them in this order, after the base.
    private let views: [(view: any TreeView, context: ViewContext)]

    /// The base gets slot 0 (its root is the mount's), views slots 1, 2, ... in the order given.
    public init(sourcePath: String, base: any TreeView, views: [any TreeView]) {
        precondition(views.count < 255, "at most 254 views")
        self.sourcePath = sourcePath
        self.base = base
        baseContext = ViewContext(slot: .base, name: base.name)
        base.attach(baseContext)
        self.views = views.enumerated().map { index, view in
            let context = ViewContext(slot: ViewSlot(UInt8(index + 1)), name: view.name)
            view.attach(context)
            return (view, context)
        }
        // A small library's views are made in milliseconds from the index: waiting for them (a
        // quarter second at most, all together) puts them in the root's first listing, right
        // after `inkyfs mount`; a large library's appear when made.
        let deadline = DispatchTime.now() + Self.firstContentWait
        for (view, _) in self.views { view.waitForFirstContent(until: deadline) }
    }
    static let firstContentWait = 0.25

    /// Set by the FUSE layer while mounted; every tree reads it from its context.
    public var kernelCache: (any KernelCacheInvalidating)? {
        get { baseContext.kernelCache }
        set {
            baseContext.kernelCache = newValue
            for (_, context) in views { context.kernelCache = newValue }
        }
    }

    private static let rootID: NodeID = 1

    /// The view answering for `id`, nil for the base tree.
    private func view(for id: NodeID) -> (any TreeView)? {
        let number = Int(ViewSlot(of: id).number)
        return number == 0 || number > views.count ? nil : views[number - 1].view
    }

    /// The views whose folders show at the root now.
    private var shown: [(view: any TreeView, context: ViewContext)] { views.filter { $0.view.isShown } }

    public func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> {
        if parent == Self.rootID, let (view, context) = views.first(where: { $0.view.name == name && $0.view.isShownWhenLookedUp() }) {
            return view.attributes(of: context.slot.rootID)
        }
        if let view = view(for: parent) {
            guard view.isShown else { return .failure(.ENOENT) }
            return view.lookup(parent: parent, name: name)
        }
        return base.lookup(parent: parent, name: name)
    }

    public func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        if let view = view(for: id) { return view.isShown ? view.attributes(of: id) : .failure(view.errnoWhileHidden(id)) }
        guard id == Self.rootID else { return base.attributes(of: id) }
        return base.attributes(of: id).map { root in
            var root = root
            // Each shown view's folder is a subdirectory of the root (its `..`). A base folder
            // it hides stays counted: a link count too high only costs find's leaf optimisation
            // a few stats, one too low would make it skip a folder.
            root.linkCount += shown.count
            return root
        }
    }

    public func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        if let view = view(for: id) { return view.isShown ? view.directoryEntries(of: id) : .failure(.ENOENT) }
        guard id == Self.rootID else { return base.directoryEntries(of: id) }
        return base.directoryEntries(of: id).map { entries in
            let shown = shown
            let names = Set(shown.map(\.view.name))
            return entries.filter { !names.contains($0.name) }
                + shown.map { DirectoryEntry(name: $0.view.name, id: $0.context.slot.rootID, kind: .directory) }
        }
    }

    public func attributesWithoutListing(of entry: DirectoryEntry) -> NodeAttributes? {
        (view(for: entry.id) ?? base).attributesWithoutListing(of: entry)
    }

    public func parent(of id: NodeID) -> NodeID {
        if let view = view(for: id) { return id == ViewSlot(of: id).rootID ? Self.rootID : view.parent(of: id) }
        return base.parent(of: id)
    }

    /// The root's listing is the composition's, made at each request.
    public func listingStamp(of id: NodeID) -> ListingStamp? {
        id == Self.rootID ? nil : (view(for: id) ?? base).listingStamp(of: id)
    }

    public func directoryListed(_ id: NodeID) {
        if let view = view(for: id) { return view.directoryListed(id) }
        base.directoryListed(id)
    }

    /// Views are the mounting user's own and record nothing: only the base tree hears who asked.
    public func open(_ id: NodeID, caller: Caller) -> Result<OpenedFile, Errno> {
        if let view = view(for: id) { return view.open(id) }
        return base.open(id, caller: caller)
    }

    public func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?, caller: Caller,
                     completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        if let view = view(for: id) { return view.read(id, offset: offset, size: size, descriptor: descriptor, completion: completion) }
        base.read(id, offset: offset, size: size, descriptor: descriptor, caller: caller, completion: completion)
    }

    public func release(_ id: NodeID) {
        if let view = view(for: id) { return view.release(id) }
        base.release(id)
    }

    public func readLink(_ id: NodeID) -> Result<String, Errno> {
        if let view = view(for: id) { return view.readLink(id) }
        return base.readLink(id)
    }

    public func extendedAttributes(of id: NodeID) -> [String: [UInt8]] {
        if let view = view(for: id) { return view.extendedAttributes(of: id) }
        return base.extendedAttributes(of: id)
    }

    /// A view's folder at the root is the composition's, and stays (the kernel answers EISDIR
    /// for unlink of a directory before asking); a name inside a view is the view's to accept.
    public func unlink(parent: NodeID, name: String, caller: Caller) -> Result<Void, Errno> {
        if parent == Self.rootID, views.contains(where: { $0.view.name == name && $0.view.isShown }) { return .failure(.EROFS) }
        if let view = view(for: parent) {
            guard view.isShown else { return .failure(.ENOENT) }
            return view.unlink(parent: parent, name: name, caller: caller)
        }
        return base.unlink(parent: parent, name: name, caller: caller)
    }
}

import Foundation
import InkyCore

/// What the mount shows: the base tree (slot 0, whose root is the mount's root) with each
/// shown view's folder added at the root. Every request goes to the tree whose slot its node
/// number carries; only the root's listing, its lookups and its link count are the
/// composition's own. The FUSE adapter serves this and never learns what the views are.
///
/// A base entry named like a shown view is hidden behind it: the view's folder is what the
/// name finds (a library folder called `Vault` shows again while the vault is locked). A view
/// not shown answers no lookup, attributes or listing; its open files still reach it (the
/// vault answers EIO for a page held open across lock).
public final class MountComposition: MountedFilesystem, @unchecked Sendable {
    private let base: any MountedFilesystem
    private let views: [UInt8: any TreeView]
    private let contexts: [ViewContext]
    /// Views in the order they were given: the root lists them in this order, after the base.
    private let order: [any TreeView]

    /// Views get slots 1, 2, ... in the order given.
    public init(base: any MountedFilesystem, views: [any TreeView]) {
        precondition(views.count < 255, "at most 254 views")
        self.base = base
        var bySlot: [UInt8: any TreeView] = [:]
        var contexts: [ViewContext] = []
        for (index, view) in views.enumerated() {
            let context = ViewContext(slot: ViewSlot(UInt8(index + 1)), name: view.name)
            view.attach(context)
            bySlot[context.slot.number] = view
            contexts.append(context)
        }
        self.views = bySlot
        self.contexts = contexts
        order = views
    }

    public var sourcePath: String { base.sourcePath }

    public var kernelCache: (any KernelCacheInvalidating)? {
        get { base.kernelCache }
        set {
            base.kernelCache = newValue
            for context in contexts { context.kernelCache = newValue }
        }
    }

    private static let rootID: NodeID = 1

    /// The view answering for `id`, nil for the base tree.
    private func view(for id: NodeID) -> (any TreeView)? {
        let slot = ViewSlot(of: id)
        return slot == .base ? nil : views[slot.number]
    }

    private func shownView(named name: String) -> (any TreeView)? {
        order.first { $0.name == name && $0.isShown }
    }

    private func rootID(of view: any TreeView) -> NodeID {
        contexts.first { $0.slot.number == slotNumber(of: view) }!.slot.rootID
    }

    private func slotNumber(of view: any TreeView) -> UInt8 {
        views.first { $0.value === view }!.key
    }

    public func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> {
        if parent == Self.rootID, let view = shownView(named: name) {
            return view.attributes(of: rootID(of: view))
        }
        if let view = view(for: parent) {
            guard view.isShown else { return .failure(.ENOENT) }
            return view.lookup(parent: parent, name: name)
        }
        return base.lookup(parent: parent, name: name)
    }

    public func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        if let view = view(for: id) { return view.isShown ? view.attributes(of: id) : .failure(.ENOENT) }
        guard id == Self.rootID else { return base.attributes(of: id) }
        return base.attributes(of: id).map { root in
            var root = root
            // Each shown view's folder is a subdirectory of the root (its `..`). A base folder
            // it hides stays counted: a link count too high only costs find's leaf optimisation
            // a few stats, one too low would make it skip a folder.
            root.linkCount += order.count(where: \.isShown)
            return root
        }
    }

    public func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        if let view = view(for: id) { return view.isShown ? view.directoryEntries(of: id) : .failure(.ENOENT) }
        guard id == Self.rootID else { return base.directoryEntries(of: id) }
        return base.directoryEntries(of: id).map { entries in
            let shown = order.filter(\.isShown)
            let names = Set(shown.map(\.name))
            return entries.filter { !names.contains($0.name) }
                + shown.map { DirectoryEntry(name: $0.name, id: rootID(of: $0), kind: .directory) }
        }
    }

    public func attributesWithoutListing(of entry: DirectoryEntry) -> NodeAttributes? {
        if view(for: entry.id) != nil { return entry.attributes }
        return base.attributesWithoutListing(of: entry)
    }

    public func remember(_ entry: DirectoryEntry) {
        if let view = view(for: entry.id) { return view.remember(entry) }
        base.remember(entry)
    }

    public func parent(of id: NodeID) -> NodeID {
        if let view = view(for: id) { return id == rootID(of: view) ? Self.rootID : view.parent(of: id) }
        return base.parent(of: id)
    }

    public func directoryListed(_ id: NodeID) {
        if let view = view(for: id) { return view.directoryListed(id) }
        base.directoryListed(id)
    }

    public func open(_ id: NodeID) -> Result<OpenedFile, Errno> {
        if let view = view(for: id) { return view.open(id) }
        return base.open(id)
    }

    public func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?,
                     completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        if let view = view(for: id) { return view.read(id, offset: offset, size: size, descriptor: descriptor, completion: completion) }
        base.read(id, offset: offset, size: size, descriptor: descriptor, completion: completion)
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

    public func forget(_ id: NodeID, count: UInt64) {
        if let view = view(for: id) { return view.forget(id, count: count) }
        base.forget(id, count: count)
    }
}

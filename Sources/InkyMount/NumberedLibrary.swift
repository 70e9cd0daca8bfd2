import InkyCore
import InkyLibrary
import InkyTree

/// The library core (`LibraryFilesystem`, which numbers nothing) as the kernel sees it: the
/// base tree of a mount (the `TreeView` of slot 0), its nodes numbered by `NodeTable` (the same for the mount's life, and
/// in every mount of a library with a state database), and the core's changes told to the
/// kernel by number (`KernelInvalidations`). Each request decodes its number once (one hold of
/// the table's lock); a lookup encodes the node it found, a listing numbers its entries in one
/// go. The vault's folders and comics are numbered here too, in the `Vault/` view's slot,
/// which serves them through this (`NumberedLibraryTree`).
public final class NumberedLibrary: NumberedLibraryTree, Sendable {
    public let core: LibraryFilesystem
    let nodes: NodeTable
    private let invalidations: KernelInvalidations

    public init(_ core: LibraryFilesystem) {
        self.core = core
        // Numbered by the state database, a path's inodes are the same in every mount.
        nodes = NodeTable(root: core.rootNode,
                          numbering: core.state.map { StoredPathNumbering(root: core.libraryPath, state: $0) } ?? MemoryPathNumbering())
        invalidations = KernelInvalidations(nodes: nodes)
        core.changeObserver = invalidations
    }

    public static let rootID: NodeID = NodeTable.rootID

    /// The views the library shows at the mount root, over this numbering: `Continue Reading/`,
    /// `Vault/` and the metadata views (`By Series/`...) unless the mount turned them off (a
    /// single comic mounted shows only its pages).
    public func standardViews() -> [any TreeView] {
        guard core.isFolderLibrary else { return [] }
        let options = core.options
        var views: [any TreeView] = []
        if let name = options.continueReadingName { views.append(ContinueReadingView(name: name, library: core, numbers: self)) }
        if let name = options.vaultName { views.append(VaultView(name: name, library: core, tree: self)) }
        if let catalog = core.startMetadataCatalog() {
            let lists = core.readingListSource()
            views += options.metadataViews.map { kind in
                MetadataTreeView(kind, catalog: catalog, library: core, readingLists: kind == .lists ? lists : nil)
            }
        }
        return views
    }

    /// The folder the mount shows (`MountComposition.sourcePath`).
    public var sourcePath: String { core.libraryPath }

    /// The base tree has no folder of its own: its root is the mount's.
    public var name: String { "" }
    public var isShown: Bool { true }

    /// The core's changes reach the kernel by number, through the context's cache while mounted.
    public func attach(_ context: ViewContext) { invalidations.context = context }

    /// `id`'s node, or what a number that leads nowhere answers: EIO for a file of a vault
    /// comic (locked while a reader held it open: its reads fail so), ENOENT otherwise.
    private func node(_ id: NodeID) -> Result<Node, Errno> {
        guard let node = nodes.node(id) else { return .failure(nodes.isVaultFile(id) ? .EIO : .ENOENT) }
        return .success(node)
    }

    private func numbered(_ attributes: NodeAttributes, _ id: NodeID) -> NodeAttributes {
        var attributes = attributes
        attributes.id = id
        return attributes
    }

    public func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> {
        guard let parent = nodes.node(parent) else { return .failure(.ENOENT) }
        return core.lookup(name, in: parent).map { child, attributes in numbered(attributes, nodes.id(for: child)) }
    }

    /// An open vault file's attributes after lock fail as its reads do (EIO): the kernel asks
    /// for them before a read of a file whose attributes lock invalidated.
    public func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        node(id).flatMap { core.attributes(of: $0) }.map { numbered($0, id) }
    }

    public func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        guard let node = nodes.node(id) else { return .failure(.ENOENT) }
        return core.directoryEntries(of: node, numbered: nodes.ids(for:))
    }

    public func attributesWithoutListing(of entry: DirectoryEntry) -> NodeAttributes? {
        if let attributes = entry.attributes { return attributes }
        return nodes.node(entry.id).flatMap { core.attributesWithoutListing(of: $0) }.map { numbered($0, entry.id) }
    }

    /// The root is its own parent, and what no longer decodes goes up to it.
    public func parent(of id: NodeID) -> NodeID {
        nodes.node(id).map { nodes.id(for: core.parent(of: $0)) } ?? Self.rootID
    }

    public func directoryListed(_ id: NodeID) {
        if let node = nodes.node(id) { core.directoryListed(node) }
    }

    public func listingStamp(of id: NodeID) -> ListingStamp? {
        nodes.node(id).flatMap { core.listingStamp(of: $0) }
    }

    public func open(_ id: NodeID, caller: Caller) -> Result<OpenedFile, Errno> {
        node(id).flatMap { core.open($0, caller: caller) }
    }

    public func open(_ id: NodeID) -> Result<OpenedFile, Errno> {
        node(id).flatMap { core.open($0) }
    }

    public func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?, caller: Caller,
                     completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        switch node(id) {
        case .success(let node): core.read(node, offset: offset, size: size, descriptor: descriptor, caller: caller, completion: completion)
        case .failure(let code): completion(.failure(code))
        }
    }

    /// Reads for this process (a view's file).
    public func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?,
                     completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        read(id, offset: offset, size: size, descriptor: descriptor, caller: .thisProcess, completion: completion)
    }

    public func release(_ id: NodeID) {
        if let node = nodes.node(id) { core.release(node) }
    }

    public func readLink(_ id: NodeID) -> Result<String, Errno> {
        guard let node = nodes.node(id) else { return .failure(.EINVAL) }
        return core.readLink(node)
    }

    public func extendedAttributes(of id: NodeID) -> [String: [UInt8]] {
        nodes.node(id).map { core.extendedAttributes(of: $0) } ?? [:]
    }

    // MARK: - What the views ask of the numbers (`NumberedLibraryTree`)

    public func pathNumber(_ path: String) -> UInt32 { nodes.pathNumber(path) }
    public func libraryPath(_ number: UInt32) -> String? { nodes.libraryPath(number) }
    public func numberVault(in slot: ViewSlot) { nodes.setVaultSlot(slot) }
    public func isVaultFile(_ id: NodeID) -> Bool { nodes.isVaultFile(id) }
}

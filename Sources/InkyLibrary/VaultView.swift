import Foundation
import InkyCore
import InkyTree

/// `Vault/` while the vault is unlocked: its folders mirror the manifest's display paths and
/// each comic is a directory of pages like the library's. The view owns the folder's name, its
/// visibility and its slot of numbers (in memory only, dropped at lock: `NodeTable`); its
/// comics share the library's machinery (catalog, window cache, workers), which answers for
/// vault nodes as for library ones (`VaultSubtree`, `LibraryNames`, `FileReads`).
final class VaultView: TreeView, Sendable {
    let name: String
    private let library: LibraryFilesystem
    /// The vault's own metadata views inside it (nil when the mount shows none).
    private let views: VaultMetadataViews?

    init(name: String, library: LibraryFilesystem) {
        self.name = name
        self.library = library
        views = library.vault.views.map { VaultMetadataViews(catalog: $0, library: library) }
    }

    var isShown: Bool { library.vault.isUnlocked }
    func errnoWhileHidden(_ id: NodeID) -> Errno { library.nodes.isVaultFile(id) ? .EIO : .ENOENT }

    func attach(_ context: ViewContext) {
        library.nodes.setVaultSlot(context.slot)
        views?.attach(context.slot)
        // The view's part of unlock and lock, after the library's: the kernel learns `Vault/`
        // appeared or went, and lock drops the numbers its views handed out.
        library.vault.whenUnlocked { [weak context] in context?.shownChanged() }
        library.vault.whenLocking { [views, weak context] _ in
            context?.shownChanged()
            context?.nodesChanged(views?.drop() ?? [])
        }
        // New trees change what `Vault/` lists: the kernel is told (its folders have no timeout to wait out).
        views?.catalog.changed = { [weak context] in
            guard let context else { return }
            context.nodesChanged([1])
            context.namesChanged(MetadataViewKind.allCases.map { (1, $0.folderName) })
        }
    }

    /// The views' node, nil when `id` is the library's (the vault's folders and comics).
    private func viewing(_ id: NodeID) -> VaultMetadataViews? {
        guard let views, views.owns(id) else { return nil }
        library.touchVault(.vaultFolder(""))
        return views
    }

    func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> {
        if let views, library.vault.isUnlocked, let found = views.lookup(parent: parent, name: name) { return found }
        return library.lookup(parent: parent, name: name)
    }

    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        if let views = viewing(id) { return views.attributes(of: id) }
        let attributes = library.attributes(of: id)
        guard let views, id == library.nodes.id(for: .vaultFolder("")), case .success(var root) = attributes else { return attributes }
        root.linkCount += views.rootEntries().count
        return .success(root)
    }

    func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        if let views = viewing(id) { return views.entries(of: id) }
        let entries = library.directoryEntries(of: id)
        guard let views, id == library.nodes.id(for: .vaultFolder("")), case .success(let own) = entries else { return entries }
        // A vault folder named like a shown view is hidden behind it, as at the mount root.
        let shown = views.rootEntries()
        let names = Set(shown.map(\.name))
        return .success(own.filter { !names.contains($0.name) } + shown)
    }

    func parent(of id: NodeID) -> NodeID { viewing(id)?.parent(of: id) ?? library.parent(of: id) }
    func readLink(_ id: NodeID) -> Result<String, Errno> { viewing(id)?.readLink(id) ?? .failure(.EINVAL) }
    func open(_ id: NodeID) -> Result<OpenedFile, Errno> {
        if let views = viewing(id) { return .failure(views.isLink(id) ? .ELOOP : .EISDIR) }
        return library.open(id)
    }
    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        if viewing(id) != nil { return completion(.failure(.EISDIR)) }
        library.read(id, offset: offset, size: size, descriptor: descriptor, completion: completion)
    }
    func release(_ id: NodeID) { if viewing(id) == nil { library.release(id) } }
    func extendedAttributes(of id: NodeID) -> [String: [UInt8]] { viewing(id) == nil ? library.extendedAttributes(of: id) : [:] }
}

extension LibraryFilesystem {
    /// The views this library shows at the mount root: `Continue Reading/`, `Vault/` and the
    /// metadata views (`By Series/`...) unless the mount turned them off (a single comic mounted
    /// shows only its pages).
    public func standardViews() -> [any TreeView] {
        guard isFolderLibrary else { return [] }
        var views: [any TreeView] = []
        if let name = options.continueReadingName { views.append(ContinueReadingView(name: name, library: self)) }
        if let name = options.vaultName { views.append(VaultView(name: name, library: self)) }
        if let state, !options.metadataViews.isEmpty {
            let catalog = MetadataCatalog(state: state, libraryPath: libraryPath, comicSuffix: options.comicsAsCBZ ? CBZFiles.suffix : "")
            catalog.start()
            let lists = readingListSource()
            views += options.metadataViews.map { kind in
                MetadataTreeView(kind, catalog: catalog, library: self, readingLists: kind == .lists ? lists : nil)
            }
        }
        return views
    }
}

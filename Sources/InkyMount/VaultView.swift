import Foundation
import InkyCore
import InkyLibrary
import InkyTree
import Synchronization

/// `Vault/` while the vault is unlocked: its folders mirror the manifest's display paths and
/// each comic is a directory of pages like the library's. The view owns the folder's name and
/// its visibility; its slot's numbers are the mount's (in memory only, dropped at lock:
/// InkyMount's `NodeTable`) but for its metadata views' (kind 15: `VaultMetadataViews`); its
/// comics share the library's machinery (catalog, window cache, workers), which answers for
/// vault nodes as for library ones (`VaultSubtree`, `LibraryNames`, `FileReads`).
final class VaultView: TreeView, Sendable {
    let name: String
    private let library: LibraryFilesystem
    /// The library as the mount numbers it, which numbers the vault's folders and comics too.
    private let tree: any NumberedLibraryTree
    /// The vault's own metadata views inside it (nil when the mount shows none).
    private let views: VaultMetadataViews?
    private let slot = Mutex(ViewSlot(255))

    init(name: String, library: LibraryFilesystem, tree: any NumberedLibraryTree) {
        self.name = name
        self.library = library
        self.tree = tree
        views = library.vault.views.map { VaultMetadataViews(catalog: $0, library: library) }
    }

    var isShown: Bool { library.vault.isUnlocked }
    func errnoWhileHidden(_ id: NodeID) -> Errno { tree.isVaultFile(id) ? .EIO : .ENOENT }

    /// `Vault/` itself.
    private var rootID: NodeID { slot.withLock { $0.rootID } }

    func attach(_ context: ViewContext) {
        slot.withLock { $0 = context.slot }
        tree.numberVault(in: context.slot)
        views?.attach(context.slot)
        // The view's part of unlock and lock, after the library's: the kernel learns `Vault/`
        // appeared or went, and lock drops the numbers its views handed out.
        library.vault.whenUnlocked { [weak context] in context?.shownChanged(appeared: true) }
        library.vault.whenLocking { [views, weak context] _ in
            context?.shownChanged(appeared: false)
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
        return tree.lookup(parent: parent, name: name)
    }

    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        if let views = viewing(id) { return views.attributes(of: id) }
        let attributes = tree.attributes(of: id)
        guard let views, id == rootID, case .success(var root) = attributes else { return attributes }
        root.linkCount += views.rootEntries().count
        return .success(root)
    }

    func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        if let views = viewing(id) { return views.entries(of: id) }
        let entries = tree.directoryEntries(of: id)
        guard let views, id == rootID, case .success(let own) = entries else { return entries }
        // A vault folder named like a shown view is hidden behind it, as at the mount root.
        let shown = views.rootEntries()
        let names = Set(shown.map(\.name))
        return .success(own.filter { !names.contains($0.name) } + shown)
    }

    func parent(of id: NodeID) -> NodeID { viewing(id)?.parent(of: id) ?? tree.parent(of: id) }
    func readLink(_ id: NodeID) -> Result<String, Errno> { viewing(id)?.readLink(id) ?? .failure(.EINVAL) }
    func open(_ id: NodeID) -> Result<OpenedFile, Errno> {
        if let views = viewing(id) { return .failure(views.isLink(id) ? .ELOOP : .EISDIR) }
        return tree.open(id)
    }
    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        if viewing(id) != nil { return completion(.failure(.EISDIR)) }
        tree.read(id, offset: offset, size: size, descriptor: descriptor, caller: .thisProcess, completion: completion)
    }
    func release(_ id: NodeID) { if viewing(id) == nil { tree.release(id) } }
    func extendedAttributes(of id: NodeID) -> [String: [UInt8]] { viewing(id) == nil ? tree.extendedAttributes(of: id) : [:] }
}

import Foundation
import InkyCore
import InkyTree

/// `Vault/` while the vault is unlocked: its folders mirror the manifest's display paths and
/// each comic is a directory of pages like the library's. The view owns the folder's name, its
/// visibility and its slot of numbers (in memory only, dropped at lock: `NodeTable`); its
/// comics share the library's machinery (catalog, window cache, workers), which answers for
/// vault nodes as for library ones (`VaultSubtree`, `LibraryNames`, `FileReads`).
final class VaultView: TreeView, @unchecked Sendable {
    let name: String
    private let library: LibraryFilesystem

    init(name: String, library: LibraryFilesystem) {
        self.name = name
        self.library = library
    }

    var isShown: Bool { library.vaultIsUnlocked }

    func attach(_ context: ViewContext) {
        library.nodes.setVaultSlot(context.slot)
        library.vaultView = context
    }

    func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> { library.lookup(parent: parent, name: name) }
    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> { library.attributes(of: id) }
    func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> { library.directoryEntries(of: id) }
    func parent(of id: NodeID) -> NodeID { library.parent(of: id) }
    func open(_ id: NodeID) -> Result<OpenedFile, Errno> { library.open(id) }
    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        library.read(id, offset: offset, size: size, descriptor: descriptor, completion: completion)
    }
    func release(_ id: NodeID) { library.release(id) }
    func extendedAttributes(of id: NodeID) -> [String: [UInt8]] { library.extendedAttributes(of: id) }
    func remember(_ entry: DirectoryEntry) { library.remember(entry) }
    func forget(_ id: NodeID, count: UInt64) { library.forget(id, count: count) }
}

extension LibraryFilesystem {
    /// The views this library shows at the mount root: `Continue Reading/` and `Vault/` unless
    /// the mount turned them off (a single comic mounted shows only its pages).
    public func standardViews() -> [any TreeView] {
        guard isFolderLibrary else { return [] }
        var views: [any TreeView] = []
        if let name = options.continueReadingName { views.append(ContinueReadingView(name: name, library: self)) }
        if let name = options.vaultName { views.append(VaultView(name: name, library: self)) }
        return views
    }
}

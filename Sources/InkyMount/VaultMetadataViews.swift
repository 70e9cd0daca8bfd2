import Foundation
import InkyCore
import InkyLibrary
import InkyTree
import Synchronization

/// `Vault/By Series/`, `Vault/By Publisher/`, `Vault/Story Arcs/` and `Vault/Recently Added/`
/// while the vault is unlocked: the metadata views of the vault's own comics, folders of relative
/// links to the comics' directories inside `Vault/` (`VaultMetadataCatalog` makes them, in
/// memory). The library's views never list a vault comic, and these never a library one.
///
/// Their nodes are in the vault's slot, kind 15 of its numbers (`NodeTable` uses 0 to 11), each
/// numbered on first sight from a table dropped at lock, like the vault's other numbers: it
/// grows with the vault's comics, not with what the kernel saw. Timeouts are 0, as for the
/// vault's folders: its comics change with no watcher to tell.
final class VaultMetadataViews: Sendable {
    let catalog: VaultMetadataCatalog
    private unowned let library: LibraryFilesystem
    /// Which view (index in `catalog.kinds`) and which node of its tree (0: the view's folder).
    private struct Key: Hashable { var view: Int; var local: UInt64 }
    private struct Numbering {
        var slot = ViewSlot(255)
        var numbers: [Key: UInt64] = [:]
        var keys: [UInt64: Key] = [:]
    }
    private let numbering = Mutex(Numbering())
    private var slot: ViewSlot { numbering.withLock { $0.slot } }
    private static let kind: UInt64 = 15, kindShift: UInt64 = 52

    init(catalog: VaultMetadataCatalog, library: LibraryFilesystem) {
        self.catalog = catalog
        self.library = library
    }

    func attach(_ slot: ViewSlot) { numbering.withLock { $0.slot = slot } }

    func owns(_ id: NodeID) -> Bool {
        numbering.withLock { ViewSlot(of: id) == $0.slot && $0.slot.local(id) >> Self.kindShift == Self.kind }
    }

    /// The id of a node, numbered now if it has none.
    private func id(_ key: Key) -> NodeID {
        numbering.withLock { numbering in
            let number = numbering.numbers[key] ?? {
                let next = UInt64(numbering.numbers.count + 1)
                numbering.numbers[key] = next
                numbering.keys[next] = key
                return next
            }()
            return numbering.slot.id(Self.kind << Self.kindShift | number)
        }
    }

    private func key(_ id: NodeID) -> Key? {
        numbering.withLock { $0.keys[$0.slot.local(id) & (1 << Self.kindShift - 1)] }
    }

    /// Every number handed out since the last lock (in the view's slot: `ViewSlot.local`), then
    /// none (the kernel is told to forget them); the trees they numbered went with the
    /// session's lock (`VaultSession.lock`).
    func drop() -> [UInt64] {
        numbering.withLock { numbering in
            let ids = numbering.numbers.values.map { Self.kind << Self.kindShift | $0 }
            numbering.numbers = [:]
            numbering.keys = [:]
            return ids
        }
    }

    /// The shown views' folders in `Vault/`: a view with nothing in it is not shown.
    func rootEntries() -> [DirectoryEntry] {
        let (trees, stamp) = catalog.current()
        return catalog.kinds.enumerated().compactMap { index, kind in
            guard let tree = trees[kind], !tree.isEmpty else { return nil }
            let id = id(Key(view: index, local: 0))
            return DirectoryEntry(name: kind.folderName, id: id, kind: .directory, attributes: directory(id, stamp, subfolders: tree.folders.count))
        }
    }

    func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno>? {
        if parent == slot.rootID {
            return rootEntries().first { $0.name == name }.flatMap(\.attributes).map { .success($0) }
        }
        guard owns(parent) else { return nil }
        return entries(of: parent).flatMap { entries in
            entries.first { $0.name == name }.flatMap(\.attributes).map { .success($0) } ?? .failure(.ENOENT)
        }
    }

    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        let (trees, stamp) = catalog.current()
        guard let key = key(id), let tree = tree(key, trees) else { return .failure(.ENOENT) }
        if key.local == 0 { return .success(directory(id, stamp, subfolders: tree.folders.count)) }
        if tree.folder(local: key.local) != nil { return .success(directory(id, stamp)) }
        guard let text = text(key, tree) else { return .failure(.ENOENT) }
        return .success(link(id, text, stamp))
    }

    func entries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        let (trees, stamp) = catalog.current()
        guard let key = key(id), let tree = tree(key, trees) else { return .failure(.ENOENT) }
        let links: [LinkTree.Link]
        if key.local == 0 {
            guard tree.rootLinks.isEmpty else { return .success(linkEntries(tree.rootLinks, key.view, tree, stamp)) }
            return .success(tree.folders.map { folder in
                let id = self.id(Key(view: key.view, local: folder.local))
                return DirectoryEntry(name: folder.name, id: id, kind: .directory, attributes: directory(id, stamp))
            })
        }
        guard let folder = tree.folder(local: key.local) else { return .failure(.ENOTDIR) }
        links = folder.links
        return .success(linkEntries(links, key.view, tree, stamp))
    }

    func readLink(_ id: NodeID) -> Result<String, Errno> {
        guard let key = key(id), let tree = tree(key, catalog.current().trees), let text = text(key, tree) else { return .failure(.EINVAL) }
        return .success(text)
    }

    func parent(of id: NodeID) -> NodeID {
        guard let key = key(id), key.local != 0 else { return slot.rootID }
        let tree = self.tree(key, catalog.current().trees)
        if tree?.folder(local: key.local) != nil || tree?.rootLinks.contains(where: { $0.local == key.local }) == true {
            return self.id(Key(view: key.view, local: 0))
        }
        let folder = tree?.folders.first { $0.links.contains { $0.local == key.local } }
        return self.id(Key(view: key.view, local: folder?.local ?? 0))
    }

    /// Whether `id` is a link (open answers ELOOP) rather than a folder (EISDIR).
    func isLink(_ id: NodeID) -> Bool {
        guard let key = key(id), key.local != 0, let tree = tree(key, catalog.current().trees) else { return false }
        return tree.target(local: key.local) != nil
    }

    private func tree(_ key: Key, _ trees: [MetadataViewKind: LinkTree]) -> LinkTree? {
        catalog.kinds.indices.contains(key.view) ? trees[catalog.kinds[key.view]] : nil
    }

    private func linkEntries(_ links: [LinkTree.Link], _ view: Int, _ tree: LinkTree, _ stamp: Int64) -> [DirectoryEntry] {
        links.compactMap { entry in
            let key = Key(view: view, local: entry.local)
            guard let text = text(key, tree) else { return nil }
            let id = id(key)
            return DirectoryEntry(name: entry.name, id: id, kind: .symlink, attributes: link(id, text, stamp))
        }
    }

    /// The link's text, relative from where it is to the comic's directory in `Vault/` (or to
    /// another view's folder there): one folder up from a view's root, two from its folders.
    private func text(_ key: Key, _ tree: LinkTree) -> String? {
        guard let target = tree.target(local: key.local) else { return nil }
        let up = tree.rootLinks.contains { $0.local == key.local } ? "../" : "../../"
        switch target {
        case .comic(let path): return up + path
        case .viewFolder(let path): return up + path
        }
    }

    private func directory(_ id: NodeID, _ stamp: Int64, subfolders: Int = 0) -> NodeAttributes {
        NodeAttributes(id: id, kind: .directory, size: 0, permissions: library.directoryPermissions(vault: true),
                       modifiedNanoseconds: stamp, entryTimeout: 0, attributeTimeout: 0, linkCount: 2 + subfolders)
    }

    private func link(_ id: NodeID, _ text: String, _ stamp: Int64) -> NodeAttributes {
        NodeAttributes(id: id, kind: .symlink, size: Int64(text.utf8.count), permissions: 0o777, modifiedNanoseconds: stamp,
                       entryTimeout: 0, attributeTimeout: 0)
    }
}

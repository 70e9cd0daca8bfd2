import InkyLibrary
import InkyTree
import Synchronization

/// The kernel told what the core announces (`LibraryChangeObserver`), by number: the one place
/// where a typed change becomes an inode number, beside the numbers themselves (`NodeTable`).
/// The core's observer for the mount's whole life: the vault's numbers go at each lock whether
/// a kernel listens or not.
final class KernelInvalidations: LibraryChangeObserver {
    private let _context = Mutex<ViewContext?>(nil)
    private let nodes: NodeTable

    init(nodes: NodeTable) { self.nodes = nodes }

    /// The base tree's place in the mount (`NumberedLibrary.attach`), whose kernel cache is set
    /// while mounted.
    var context: ViewContext? {
        get { _context.withLock { $0 } }
        set { _context.withLock { $0 = newValue } }
    }

    private var kernel: (any KernelCacheInvalidating)? { context?.kernelCache }

    func namesChanged(_ names: [String], in parent: Node) {
        guard let kernel else { return }
        let id = nodes.id(for: parent)
        for name in names { kernel.invalidateEntry(parent: id, name: name) }
    }

    func nodeChanged(_ node: Node) {
        guard let kernel else { return }
        kernel.invalidateNode(nodes.id(for: node))
    }

    /// Each file first (the kernel's cached page bytes go with its inode's data), then the names
    /// in `Vault/`, then every folder and comic numbered since the last lock, whose numbers go.
    func vaultLocked(shownNames: [String], files: [Node]) {
        let listening = kernel
        if let listening {
            for node in files { listening.invalidateNode(nodes.id(for: node)) }
            let vault = nodes.id(for: .vaultFolder(""))
            for name in shownNames { listening.invalidateEntry(parent: vault, name: name) }
        }
        let dropped = nodes.dropVault()
        if let listening { for id in dropped { listening.invalidateNode(id) } }
    }

    /// Numbered in one read of the database, before their replies are made: numbering each
    /// comic alone was a third of listing a folder ahead.
    func willList(_ comics: [ComicRef]) {
        nodes.prepare(comics.map(Node.comic))
    }

    func comicListed(_ comic: ComicRef, stamp: ListingStamp,
                     entries: (_ numbered: ([Node]) -> [NodeID]) -> [DirectoryEntry]) {
        guard let kernel else { return }
        kernel.listingReady(nodes.id(for: .comic(comic)), stamp: stamp, entries: entries(nodes.ids(for:)))
    }
}

import InkyTree

/// The kernel told what the core announces (`LibraryChangeObserver`), by number: the one place
/// where a typed change becomes an inode number, beside the numbers themselves (`NodeTable`).
final class KernelInvalidations: LibraryChangeObserver {
    let kernel: any KernelCacheInvalidating
    private let nodes: NodeTable

    init(kernel: any KernelCacheInvalidating, nodes: NodeTable) {
        self.kernel = kernel
        self.nodes = nodes
    }

    func namesChanged(_ names: [String], in parent: Node) {
        let id = nodes.id(for: parent)
        for name in names { kernel.invalidateEntry(parent: id, name: name) }
    }

    func nodeChanged(_ node: Node) { kernel.invalidateNode(nodes.id(for: node)) }

    /// Each file first (the kernel's cached page bytes go with its inode's data), then the names
    /// in `Vault/`, then every folder and comic numbered since the last lock, whose numbers go.
    func vaultLocked(shownNames: [String], files: [Node]) {
        for node in files { nodeChanged(node) }
        namesChanged(shownNames, in: .vaultFolder(""))
        for id in nodes.dropVault() { kernel.invalidateNode(id) }
    }

    func comicListed(_ comic: ComicRef, stamp: ListingStamp, entries: [DirectoryEntry]) {
        kernel.listingReady(nodes.id(for: .comic(comic)), stamp: stamp, entries: entries)
    }
}

import Foundation
import InkyCore
import InkyTree

/// Names and attributes: what a lookup finds, what `stat` shows, what a directory lists. A
/// folder holds the library's folders and comics (the views' folders at the root are added by
/// `MountComposition`); a comic directory holds its pages, or only ERROR.txt. Vault folders and
/// comics are answered here too, for the mount's `Vault/` view, which shares the comics' machinery.
///
/// Nodes are typed: attributes come back with no number (`NodeAttributes.id` 0), listings are
/// numbered by the function the caller gives, and the caller numbers what a lookup found.
extension LibraryFilesystem {
    /// `name` in directory `parent`: the node it names, with its attributes.
    public func lookup(_ name: String, in parent: Node) -> Result<(node: Node, attributes: NodeAttributes), Errno> {
        child(name, in: parent).flatMap { child in attributes(of: child).map { (node: child, attributes: $0) } }
    }

    private func child(_ name: String, in parent: Node) -> Result<Node, Errno> {
        touchVault(parent)
        switch parent {
        case .vaultFolder(let folder):
            guard let children = vaultChildren(folder), let child = children[name] ?? vaultCoverNode(children, folder: folder, name: name) else {
                return .failure(.ENOENT)
            }
            return .success(child)
        case .folder(let path):
            return folderIndex(path).flatMap { index in
                if options.comicsAsCBZ, let shown = cbzLookup(index, name: name) { return shown }
                guard let child = index[name] ?? coverNode(index, folder: path, name: name) else { return .failure(.ENOENT) }
                return .success(child)
            }
        case .comic(let comic):
            return comicChild(comic, name: name)
        default:
            return .failure(.ENOTDIR)
        }
    }

    /// What `stat` shows for `node`, its `id` left 0.
    public func attributes(of node: Node) -> Result<NodeAttributes, Errno> {
        let volatile = treeTimeout
        switch node {
        case .folder(let path), .file(let path):
            let isFolder = { if case .folder = node { true } else { false } }()
            let info: stat
            switch sourceStatus(path, type: isFolder ? S_IFDIR : S_IFREG) {
            case .success(let value): info = value
            case .failure(let code): return .failure(code)
            }
            let source = SourcePermissions(info)
            var attributes = NodeAttributes(kind: isFolder ? .directory : .regularFile,
                                            size: isFolder ? 0 : Int64(info.st_size), permissions: source.readOnly,
                                            modifiedNanoseconds: FileIdentity(info).modifiedNanoseconds,
                                            entryTimeout: volatile, attributeTimeout: volatile, owner: source.owner, group: source.group)
            // The root's link count follows the vault's lock state too: unlock and lock tell
            // the kernel to forget the root's attributes (a zero timeout here would cost a
            // GETATTR of the root for every path looked up through the mount).
            if case .folder(let path) = node {
                attributes.linkCount = 2 + ((try? catalog.subdirectoryCount(path, identity: FileIdentity(info)).get()) ?? 0)
            }
            return .success(attributes)
        case .comic(let comic):
            // A comic directory's stat shows its file's identity and permissions, nothing of
            // its listing. A comic whose state the budget let go is answered from its file, not
            // loaded again from the index for it: on a mount that is not read-only the kernel
            // asks for the attributes of every folder listed (atime), so a second `ls -lR` of
            // 20,000 comics loaded and decoded 20,000 listings. A changed file shows a new
            // mtime, and the kernel lists the directory again, where `currentComic` sees it.
            if !comic.isVault, comicState(comic) == nil, case .success(let check) = listedComicCheck(comic) {
                return .success(comicAttributes(comic, check.identity, check.permissions))
            }
            return currentComic(comic).map { state, snapshot in comicAttributes(comic, snapshot.identity, state.permissions) }
        case .link(let path):
            return linkAttributes(path)
        case .page(let comic, let generation, let index):
            return sameGeneration(comic, generation).flatMap { snapshot in
                guard case .success(let listing) = snapshot.listing, index < listing.pages.count else { return .failure(.ENOENT) }
                let page = listing.pages[index]
                if page.isSizeKnown { return .success(fileAttributes(comic, size: page.size, snapshot)) }
                return renderedSize(comic, snapshot, listing, index).map { fileAttributes(comic, size: $0, snapshot) }
            }
        case .comicInfo(let comic, let generation):
            return sameGeneration(comic, generation).flatMap { snapshot in
                guard case .success(let listing) = snapshot.listing, let size = listing.comicInfo?.declaredSize else { return .failure(.ENOENT) }
                return .success(fileAttributes(comic, size: size, snapshot))
            }
        case .errorText(let comic, let generation):
            return sameGeneration(comic, generation).flatMap { snapshot in
                guard let text = Self.errorText(snapshot.listing, path: realPath(comic)) else { return .failure(.ENOENT) }
                return .success(fileAttributes(comic, size: Int64(text.utf8.count), snapshot))
            }
        case .comicFile(let comic, let generation):
            return sameGeneration(comic, generation).flatMap { snapshot in
                cbzSize(comic, snapshot).map { fileAttributes(comic, size: $0, snapshot) }
            }
        case .folderCover, .folderDesktop, .comicDesktop:
            return coverAttributes(node)
        case .vaultFolderCover, .vaultFolderDesktop:
            return vaultCoverAttributes(node)
        case .vaultFolder(let folder):
            guard let children = vaultChildren(folder) else { return .failure(.ENOENT) }
            // Every child of a vault folder is a folder or a comic: a directory. Kept by the kernel
            // as its comics are (`timeout(_:)`): the folders change only at unlock and lock (no other
            // process can change an unlocked vault: `VaultDirectoryLock`), and lock takes `Vault/`'s
            // entries out of the kernel, the folders below with them. At no timeout, every page
            // opened by its path looked up and stat'ed `Vault/` and each folder again: 4 requests of
            // a page's 12, a sixth of the daemon's CPU reading a stored comic.
            return .success(NodeAttributes(kind: .directory, size: 0, permissions: directoryPermissions(vault: true),
                                           modifiedNanoseconds: Int64(Date().timeIntervalSince1970 * 1e9),
                                           entryTimeout: options.treeTimeout, attributeTimeout: options.treeTimeout,
                                           linkCount: 2 + children.count))
        }
    }

    /// `permissions`: whose the archive was at the check that gave `archive`, when there was one
    /// (looking again cost a second stat of every comic of a listed folder).
    /// `timeout`: the kernel's for it, when the caller knows it (`timeout(_:)`, which a folder's
    /// listing reads once, not twice a comic: it takes two locks).
    func comicAttributes(_ comic: ComicRef, _ archive: FileIdentity, _ permissions: SourcePermissions? = nil,
                         timeout known: Double? = nil) -> NodeAttributes {
        let source = permissions ?? comicPermissions(comic)
        let timeout = known ?? timeout(comic)
        return NodeAttributes(kind: .directory, size: 0, permissions: source.comicFolder,
                              modifiedNanoseconds: archive.modifiedNanoseconds,
                              entryTimeout: timeout, attributeTimeout: timeout, linkCount: 2,
                              owner: source.owner, group: source.group)
    }

    /// A vault comic's names change with no watcher to tell (vault add, remove, lock): the
    /// mount's tree timeout, never "until told".
    private func timeout(_ comic: ComicRef) -> Double { comic.isVault ? options.treeTimeout : treeTimeout }

    /// A file of a comic directory. The kernel gets the whole identity hash as the entry's
    /// generation: a changed archive whose pages' numbers happened to come out the same (the
    /// number carries 16 bits of it) still gets fresh inodes, never the old file's cached bytes.
    func fileAttributes(_ comic: ComicRef, size: Int64, _ snapshot: ComicState.Snapshot,
                        source known: SourcePermissions? = nil, entryTimeout: Double? = nil) -> NodeAttributes {
        let source = known ?? comicPermissions(comic)
        var attributes = NodeAttributes(kind: .regularFile, size: size, permissions: source.page,
                                        modifiedNanoseconds: snapshot.identity.modifiedNanoseconds,
                                        entryTimeout: entryTimeout ?? (comic.isVault ? options.pageEntryTimeout : pageEntryTimeout),
                                        attributeTimeout: options.pageAttributeTimeout,
                                        owner: source.owner, group: source.group)
        attributes.generation = snapshot.identity.generation
        return attributes
    }

    /// The vault's directories are the mounting user's alone unless the mount says otherwise.
    public func directoryPermissions(vault: Bool) -> UInt32 {
        vault && !options.vaultAllowOther ? 0o500 : 0o555
    }

    // MARK: - Directories

    /// Directory `node`'s entries, without `.` and `..`, numbered by `numbered` (the caller's
    /// numbers of the nodes given, in their order, asked for once a listing).
    public func directoryEntries(of node: Node, numbered: ([Node]) -> [NodeID]) -> Result<[DirectoryEntry], Errno> {
        touchVault(node)
        switch node {
        case .folder(let path):
            return folderIndex(path).map { index in
                var listing = UnnumberedListing(capacity: index.count + 2)
                if let (name, cover) = coverEntry(index, folder: path) { listing.add(name, cover, kind: .regularFile) }
                // What the folder's listing saw of each comic's file, for its directory's
                // attributes, is as good as the kernel's copy of them while the watcher sees every
                // change (and tells both); else each is looked at again (`attributes(of:)`).
                let keptChecks = watcherSeesEverything
                let timeout = treeTimeout
                for position in 0..<index.count {
                    let name = index.name(position)
                    let child = index.node(position)
                    if options.comicsAsCBZ, case .comic(let comic) = child {
                        if let (entry, shown) = cbzEntry(comic, name: name, shadowed: index) { listing.add(entry, shown) }
                        continue
                    }
                    if keptChecks, case .comic(let comic) = child, let check = index.check(position) {
                        listing.add(DirectoryEntry(name: name, id: 0, kind: .directory,
                                                   attributes: comicAttributes(comic, check.identity, check.permissions,
                                                                               timeout: timeout)), child)
                        continue
                    }
                    let kind: NodeAttributes.Kind = switch child {
                    case .file: .regularFile
                    case .link: .symlink
                    default: .directory
                    }
                    listing.add(name, child, kind: kind)
                }
                return listing.numbered(by: numbered)
            }
        case .vaultFolder(let folder):
            guard let children = vaultChildren(folder) else { return .failure(.ENOENT) }
            var listing = UnnumberedListing(capacity: children.count + 2)
            if let (name, cover) = vaultCoverEntry(children, folder: folder) { listing.add(name, cover, kind: .regularFile) }
            for name in children.keys.sorted() { listing.add(name, children[name]!, kind: .directory) }
            return .success(listing.numbered(by: numbered))
        case .comic(let comic):
            // One look at the archive for the whole listing: each page's attributes come from
            // this snapshot and the archive's modes read once, not from a check of the file per
            // page (a 20,000-comic listing made 320,000 walks of the path that way).
            return currentComic(comic).map { state, snapshot in
                comicEntries(comic, snapshot, state.permissions ?? comicPermissions(comic), numbered: numbered)
            }
        default:
            return .failure(.ENOTDIR)
        }
    }

    /// A comic directory's files: its pages and hidden ComicInfo.xml, or only ERROR.txt, with
    /// their attributes, numbered in one go.
    func comicEntries(_ comic: ComicRef, _ snapshot: ComicState.Snapshot, _ source: SourcePermissions,
                      numbered: ([Node]) -> [NodeID]) -> [DirectoryEntry] {
        let children = comicChildren(comic, snapshot)
        // Once a comic, not once a page: the entry timeout reads the watcher's coverage under
        // two locks.
        let entryTimeout = comic.isVault ? options.pageEntryTimeout : pageEntryTimeout
        let listing = try? snapshot.listing.get()
        return zip(children, numbered(children.map(\.node))).map { child, id in
            var attributes = listedAttributes(child.node, comic, snapshot, listing, source, entryTimeout: entryTimeout)
            attributes?.id = id
            return DirectoryEntry(name: child.name, id: id, kind: .regularFile, attributes: attributes)
        }
    }

    /// A comic file's attributes as its listing tells them; nil for a page whose size only a
    /// render tells (a listing never renders).
    private func listedAttributes(_ node: Node, _ comic: ComicRef, _ snapshot: ComicState.Snapshot,
                                  _ listing: ComicListing?, _ source: SourcePermissions, entryTimeout: Double) -> NodeAttributes? {
        switch node {
        case .page(_, _, let index):
            guard let page = listing?.pages[safe: index], page.isSizeKnown else { return nil }
            return fileAttributes(comic, size: page.size, snapshot, source: source, entryTimeout: entryTimeout)
        case .comicInfo:
            guard case .success(let listing) = snapshot.listing, let size = listing.comicInfo?.declaredSize else { return nil }
            return fileAttributes(comic, size: size, snapshot, source: source)
        case .errorText:
            return Self.errorText(snapshot.listing, path: realPath(comic)).map {
                fileAttributes(comic, size: Int64($0.utf8.count), snapshot, source: source)
            }
        case .comicDesktop(_, let generation):
            return (try? comicDesktopBytes(comic, generation).get()).map { fileAttributes(comic, size: Int64($0.count), snapshot, source: source) }
        default:
            return nil
        }
    }

    /// Every file node of a comic's current generation: its pages, ComicInfo.xml and ERROR.txt.
    static func files(of comic: ComicRef, _ snapshot: ComicState.Snapshot) -> [Node] {
        var files = [Node.errorText(comic: comic, generation: snapshot.generation), .comicInfo(comic: comic, generation: snapshot.generation),
                     .comicFile(comic: comic, generation: snapshot.generation), .comicDesktop(comic: comic, generation: snapshot.generation)]
        if case .success(let listing) = snapshot.listing {
            files += listing.pages.map { .page(comic: comic, generation: snapshot.generation, index: $0.number) }
        }
        return files
    }

    func comicChildren(_ comic: ComicRef, _ snapshot: ComicState.Snapshot) -> [(name: String, node: Node)] {
        if Self.errorText(snapshot.listing, path: realPath(comic)) != nil {
            return [("ERROR.txt", .errorText(comic: comic, generation: snapshot.generation))]
        }
        guard case .success(let listing) = snapshot.listing else { return [] }
        var children = listing.pages.map { ($0.name, Node.page(comic: comic, generation: snapshot.generation, index: $0.number)) }
        if listing.comicInfo != nil { children.append((".ComicInfo.xml", .comicInfo(comic: comic, generation: snapshot.generation))) }
        // `.directory` is found by name (`comicChild`), never listed: Dolphin reads it by its path
        // for the folder's icon, and a viewer given the folder (feh) tried it as a page and warned.
        return children
    }

    private func comicChild(_ comic: ComicRef, name: String) -> Result<Node, Errno> {
        currentComic(comic).flatMap { state, snapshot in
            if name == "ERROR.txt", Self.errorText(snapshot.listing, path: realPath(comic)) != nil {
                return .success(.errorText(comic: comic, generation: snapshot.generation))
            }
            guard case .success(let listing) = snapshot.listing, !listing.pages.isEmpty else { return .failure(.ENOENT) }
            if name == ".ComicInfo.xml", listing.comicInfo != nil {
                return .success(.comicInfo(comic: comic, generation: snapshot.generation))
            }
            if name == ".directory", showsDesktopEntry(comic, listing) {
                return .success(.comicDesktop(comic: comic, generation: snapshot.generation))
            }
            guard let number = state.pageNumber(named: name) else { return .failure(.ENOENT) }
            return .success(.page(comic: comic, generation: snapshot.generation, index: number))
        }
    }
}

/// A listing made before it is numbered: its entries, and the node of each, numbered in one
/// call once all are known (one hold of the numbers' lock for a whole folder).
struct UnnumberedListing {
    private var entries: [DirectoryEntry] = []
    private var nodes: [Node] = []

    init(capacity: Int) {
        entries.reserveCapacity(capacity)
        nodes.reserveCapacity(capacity)
    }

    mutating func add(_ entry: DirectoryEntry, _ node: Node) {
        entries.append(entry)
        nodes.append(node)
    }

    mutating func add(_ name: String, _ node: Node, kind: NodeAttributes.Kind) {
        add(DirectoryEntry(name: name, id: 0, kind: kind), node)
    }

    mutating func numbered(by number: ([Node]) -> [NodeID]) -> [DirectoryEntry] {
        for (index, id) in number(nodes).enumerated() {
            entries[index].id = id
            entries[index].attributes?.id = id
        }
        return entries
    }
}

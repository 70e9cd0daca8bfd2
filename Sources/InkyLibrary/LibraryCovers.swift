import Foundation
import InkyCore
import InkyTree
import InkyWorker

/// The files file managers read for a folder's picture, in the folder view: a series folder's
/// `folder.jpg` (the cover of its first comic, unless the library has a `folder.jpg` or
/// `cover.jpg` there, which pass through instead) and `.directory` (KDE's `Icon=`) in series
/// folders and comic directories. No lookup, `stat` or listing waits for a cover: one not made
/// yet is not there, its making is queued (`BackgroundOnce`), and once it is in the cache the
/// kernel is told to forget the folder's listing and the missing name, so `folder.jpg` appears.
extension LibraryFilesystem {
    /// Covers are at most this many pixels high.
    static let coverHeight = 600

    /// The added file `name` of library folder `path`, nil when there is none of that name.
    func coverNode(_ index: FolderIndex, folder path: String, name: String) -> Node? {
        guard options.covers != nil, !options.comicsAsCBZ, index.nodes[name] == nil, Self.firstComic(index) != nil else { return nil }
        switch name {
        case "folder.jpg": return Self.ownPicture(index) == nil && coverIsMade(index, folder: path) ? .folderCover(path) : nil
        case ".directory": return .folderDesktop(path)
        default: return nil
        }
    }

    /// The entries a series folder's listing adds: no cover is made here.
    func coverEntries(_ index: FolderIndex, folder path: String) -> [DirectoryEntry] {
        ["folder.jpg", ".directory"].compactMap { name in
            coverNode(index, folder: path, name: name).map { DirectoryEntry(name: name, id: nodes.id(for: $0), kind: .regularFile) }
        }
    }

    /// Whether the folder's cover is in the cache; when it is not (and has not failed), its
    /// making is queued. Costs a `stat` of the first comic and an `access` of the cache file.
    private func coverIsMade(_ index: FolderIndex, folder path: String) -> Bool {
        guard let covers = options.covers, let comic = Self.firstComic(index),
              case .success(let identity) = comicIdentity(.library(comic)) else { return false }
        let key = CoverCache.key(path: comic, identity: identity)
        if covers.contains(key) { return true }
        if !covers.hasFailed(key) { scheduleCover(folder: path, comic: comic, covers) }
        return false
    }

    private func scheduleCover(folder path: String, comic: String, _ covers: CoverCache) {
        coverMaking.schedule(path) { [weak self] in
            guard let self, !self.isStopping, case .success = self.makeCover(of: comic, covers) else { return }
            // The kernel may hold the listing without folder.jpg and the name as missing.
            let folder = self.nodes.id(for: .folder(path))
            self.kernelCache?.invalidateEntry(parent: folder, name: "folder.jpg")
            self.kernelCache?.invalidateNode(folder)
        }
    }

    /// The first comic of a folder in its listing's order (the reading order), nil when it holds none.
    static func firstComic(_ index: FolderIndex) -> String? {
        for name in index.names { if case .comic(.library(let path))? = index.nodes[name] { return path } }
        return nil
    }

    /// The picture the library itself has for a folder, which passes through unchanged.
    static func ownPicture(_ index: FolderIndex) -> String? {
        ["folder.jpg", "cover.jpg"].first { name in
            if case .file? = index.nodes[name] { true } else { false }
        }
    }

    /// `.directory` of a series folder or comic directory: Dolphin shows `Icon=` as its picture.
    static func desktopEntry(icon: String) -> [UInt8] { Array("[Desktop Entry]\nIcon=./\(icon)\n".utf8) }

    func folderDesktopBytes(_ path: String) -> Result<[UInt8], Errno> {
        folderIndex(path).map { Self.desktopEntry(icon: Self.ownPicture($0) ?? "folder.jpg") }
    }

    func comicDesktopBytes(_ comic: ComicRef, _ generation: Int) -> Result<[UInt8], Errno> {
        sameGeneration(comic, generation).flatMap { snapshot in
            guard case .success(let listing) = snapshot.listing, let first = listing.pages.first else { return .failure(.ENOENT) }
            return .success(Self.desktopEntry(icon: first.name))
        }
    }

    /// The cover of a series folder's first comic, from the disk cache only (no archive is
    /// opened here); one not made yet is queued and is not there.
    func folderCoverBytes(_ path: String) -> Result<[UInt8], Errno> {
        guard let covers = options.covers else { return .failure(.ENOENT) }
        return folderIndex(path).flatMap { index in
            guard let comic = Self.firstComic(index), case .success(let identity) = comicIdentity(.library(comic)) else { return .failure(.ENOENT) }
            if let bytes = covers.cover(CoverCache.key(path: comic, identity: identity)) { return .success(bytes) }
            _ = coverIsMade(index, folder: path)
            return .failure(.ENOENT)
        }
    }

    /// Makes a comic's cover in a worker and keeps it in the cache (off the FUSE threads).
    func makeCover(of comic: String, _ covers: CoverCache) -> Result<[UInt8], Errno> {
        currentComic(.library(comic)).flatMap { state, snapshot in
            guard case .success(let listing) = snapshot.listing, let first = listing.pages.first else { return .failure(.ENOENT) }
            let key = CoverCache.key(path: comic, identity: snapshot.identity)
            if let bytes = covers.cover(key) { return .success(bytes) }
            if covers.hasFailed(key) { return .failure(.EIO) }
            let entry = EntryRequest(source: first.source, size: first.size, name: first.sourcePath)
            do throws(ComicError) {
                let bytes = try backend.cover(state.realPath, identity: snapshot.identity, entry: entry, height: Self.coverHeight,
                                              limits: options.limits)
                covers.store(key, bytes)
                // One the cache cannot hold (over its cap) would be made again at every listing.
                if !covers.contains(key) { covers.markFailed(key) }
                return .success(bytes)
            } catch {
                // Not tried again this mount: a page that does not decode will not decode at the next listing.
                if case .io = error {} else { covers.markFailed(key) }
                logger(.error("cover failed: \(loggable(error, of: .library(comic)))"))
                return .failure(error.errno)
            }
        }
    }

    /// Attributes of the added files: the folder's owner and read bits, the size of the bytes.
    func coverAttributes(_ id: NodeID, _ node: Node) -> Result<NodeAttributes, Errno> {
        let folder: String
        let bytes: Result<[UInt8], Errno>
        switch node {
        case .folderCover(let path): (folder, bytes) = (path, folderCoverBytes(path))
        case .folderDesktop(let path): (folder, bytes) = (path, folderDesktopBytes(path))
        case .comicDesktop(let comic, let generation):
            return sameGeneration(comic, generation).flatMap { snapshot in
                comicDesktopBytes(comic, generation).map { fileAttributes(id, comic, size: Int64($0.count), snapshot) }
            }
        default: return .failure(.ENOENT)
        }
        // A folder's cover is readable only by whoever may read the comic it is made from.
        let comic: SourcePermissions? = if case .folderCover = node, case .success(let index) = folderIndex(folder),
            let first = Self.firstComic(index), case .success(let info) = sourceStatus(first, type: S_IFREG) { SourcePermissions(info) } else { nil }
        return bytes.flatMap { bytes in
            sourceStatus(folder, type: S_IFDIR).map { info in
                let source = SourcePermissions(info)
                let permissions = comic.map { source.cover(from: $0) } ?? source.page
                return NodeAttributes(id: id, kind: .regularFile, size: Int64(bytes.count), permissions: permissions,
                                      modifiedNanoseconds: FileIdentity(info).modifiedNanoseconds,
                                      entryTimeout: treeTimeout, attributeTimeout: treeTimeout, owner: source.owner, group: source.group)
            }
        }
    }

    func coverFileBytes(_ node: Node) -> Result<[UInt8], Errno> {
        switch node {
        case .folderCover(let path): folderCoverBytes(path)
        case .folderDesktop(let path): folderDesktopBytes(path)
        case .comicDesktop(let comic, let generation): comicDesktopBytes(comic, generation)
        case .vaultFolderCover(let folder): vaultFolderCoverBytes(folder)
        case .vaultFolderDesktop(let folder): vaultFolderDesktopBytes(folder)
        default: .failure(.ENOENT)
        }
    }
}

extension LibraryFilesystem {
    /// A comic with pages gets a `.directory` (a vault comic's is made in memory, like its pages).
    func showsDesktopEntry(_ comic: ComicRef, _ listing: ComicListing) -> Bool {
        options.covers != nil && !listing.pages.isEmpty && !listing.pages.contains { $0.name == ".directory" }
    }
}

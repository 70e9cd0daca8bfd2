import Foundation
import InkyCore
import InkyTree
import InkyWorker

/// The files file managers read for a folder's picture, in the folder view: a series folder's
/// `folder.jpg` (the cover of its first comic that gives one, unless the library has a
/// `folder.jpg` or `cover.jpg` there, which pass through instead) and `.directory` (KDE's
/// `Icon=`) in series folders and comic directories. No lookup, `stat` or listing waits for a
/// cover: `folder.jpg` is listed from the first listing with its size known ahead
/// (`CoverSize.bytes`), its making is queued then (`BackgroundOnce`), and the first read of one
/// not made yet waits for it.
extension LibraryFilesystem {
    /// Covers are at most this many pixels high.
    static let coverHeight = 600
    /// Comics of a folder tried for its cover before `folder.jpg` answers EIO.
    static let coverTries = 8

    /// The added file `name` of library folder `path`, nil when there is none of that name.
    func coverNode(_ index: FolderIndex, folder path: String, name: String) -> Node? {
        guard options.covers != nil, !options.comicsAsCBZ, index.nodes[name] == nil, Self.firstComic(index) != nil else { return nil }
        switch name {
        case "folder.jpg": return Self.ownPicture(index) == nil && coverComic(index) != nil ? .folderCover(path) : nil
        case ".directory": return .folderDesktop(path)
        default: return nil
        }
    }

    /// The entries a series folder's listing adds; the cover's making is queued, not waited for.
    func coverEntries(_ index: FolderIndex, folder path: String) -> [DirectoryEntry] {
        ["folder.jpg", ".directory"].compactMap { name in
            coverNode(index, folder: path, name: name).map { node in
                if case .folderCover = node { queueCover(index, folder: path) }
                return DirectoryEntry(name: name, id: nodes.id(for: node), kind: .regularFile)
            }
        }
    }

    /// The comics a folder's cover may come from, in reading order, with their cache keys: those
    /// whose cover has not failed this mount (a `stat` each, of the first one alone as a rule).
    private func coverComics(_ index: FolderIndex) -> some Sequence<(comic: String, key: String)> {
        let covers = options.covers
        return index.names.lazy.compactMap { name -> (comic: String, key: String)? in
            guard let covers, case .comic(.library(let path))? = index.nodes[name],
                  case .success(let identity) = self.comicIdentity(.library(path)) else { return nil }
            let key = CoverCache.key(path: path, identity: identity)
            return covers.hasFailed(key) ? nil : (path, key)
        }.prefix(Self.coverTries)
    }

    private func coverComic(_ index: FolderIndex) -> (comic: String, key: String)? {
        coverComics(index).first { _ in true }
    }

    /// Queues the making of the folder's cover unless it is in the cache.
    private func queueCover(_ index: FolderIndex, folder path: String) {
        guard let covers = options.covers, let first = coverComic(index), !covers.contains(first.key) else { return }
        coverMaking.schedule(path) { [weak self] in
            guard let self, !self.isStopping, case .success(let index) = self.folderIndex(path), self.madeCover(index, covers) == nil else { return }
            self.forgetCover(of: path)
        }
    }

    /// No comic of the folder gives a cover: the kernel drops the `folder.jpg` it was listed with.
    private func forgetCover(of path: String) {
        let folder = nodes.id(for: .folder(path))
        kernelCache?.invalidateEntry(parent: folder, name: "folder.jpg")
        kernelCache?.invalidateNode(folder)
    }

    /// The folder's cover: from the cache, else made now from its first comic that gives one.
    private func madeCover(_ index: FolderIndex, _ covers: CoverCache) -> [UInt8]? {
        for (comic, key) in coverComics(index) {
            if let bytes = covers.cover(key), bytes.count <= CoverSize.bytes { return bytes }
            if case .success(let bytes) = makeCover(of: comic, covers, remaking: true) { return bytes }
        }
        return nil
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

    /// The cover of a series folder, `CoverSize.bytes` long as it was listed: the first read of
    /// one not made yet waits for its making. EIO when no comic of the folder gives one.
    func folderCoverBytes(_ path: String) -> Result<[UInt8], Errno> {
        guard let covers = options.covers else { return .failure(.ENOENT) }
        return folderIndex(path).flatMap { index in
            guard let bytes = madeCover(index, covers), let padded = PaddedImage.padded(bytes, to: CoverSize.bytes) else { return .failure(.EIO) }
            return .success(padded)
        }
    }

    /// Makes a comic's cover in a worker and keeps it in the cache (off the FUSE threads).
    /// `remaking`: one in the cache larger than `CoverSize.bytes` (made before covers had a size) is made again.
    func makeCover(of comic: String, _ covers: CoverCache, remaking: Bool = false) -> Result<[UInt8], Errno> {
        currentComic(.library(comic)).flatMap { state, snapshot in
            guard case .success(let listing) = snapshot.listing, let first = listing.pages.first else { return .failure(.ENOENT) }
            let key = CoverCache.key(path: comic, identity: snapshot.identity)
            if let bytes = covers.cover(key), !remaking || bytes.count <= CoverSize.bytes { return .success(bytes) }
            if covers.hasFailed(key) { return .failure(.EIO) }
            let entry = EntryRequest(source: first.source, size: first.size, name: first.sourcePath)
            do throws(ComicError) {
                let bytes = try backend.cover(source(of: state), identity: snapshot.identity, entry: entry, height: Self.coverHeight,
                                              limits: options.limits)
                // One larger than its listed size (a worker of another build) cannot be served.
                guard bytes.count <= CoverSize.bytes else {
                    covers.markFailed(key)
                    return .failure(.EIO)
                }
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

    /// Attributes of the added files: the folder's owner and read bits, the size of the bytes
    /// (a cover's listed size: its attributes never wait for it).
    func coverAttributes(_ id: NodeID, _ node: Node) -> Result<NodeAttributes, Errno> {
        let folder: String
        let size: Result<Int, Errno>
        var comic: SourcePermissions?
        switch node {
        case .folderCover(let path):
            folder = path
            guard case .success(let index) = folderIndex(path), let from = coverComic(index) else { return .failure(.ENOENT) }
            size = .success(CoverSize.bytes)
            // A folder's cover is readable only by whoever may read the comic it is made from.
            if case .success(let info) = sourceStatus(from.comic, type: S_IFREG) { comic = SourcePermissions(info) }
        case .folderDesktop(let path): (folder, size) = (path, folderDesktopBytes(path).map(\.count))
        case .comicDesktop(let comic, let generation):
            return sameGeneration(comic, generation).flatMap { snapshot in
                comicDesktopBytes(comic, generation).map { fileAttributes(id, comic, size: Int64($0.count), snapshot) }
            }
        default: return .failure(.ENOENT)
        }
        return size.flatMap { size in
            sourceStatus(folder, type: S_IFDIR).map { info in
                let source = SourcePermissions(info)
                let permissions = comic.map { source.cover(from: $0) } ?? source.page
                return NodeAttributes(id: id, kind: .regularFile, size: Int64(size), permissions: permissions,
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

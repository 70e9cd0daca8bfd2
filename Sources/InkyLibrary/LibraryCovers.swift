import Foundation
import InkyCore
import InkyTree
import InkyWorker

/// The files file managers read for a folder's picture, in the folder view: a series folder's
/// `folder.jpg` (the cover of its first comic that gives one, unless the library has a
/// `folder.jpg` or `cover.jpg` there, which pass through instead) and `.directory` (KDE's
/// `Icon=`) in series folders and comic directories. No lookup, `stat` or listing waits for a
/// cover: `folder.jpg` is listed from the first listing with its size known ahead
/// (`CoverSize.bytes`), its making is queued then, and the first read of one not made yet waits
/// for it. The covers themselves are `FolderCovers`'; here are their nodes, attributes and the
/// library's part of making one (the comic's listing, its worker).
extension LibraryFilesystem {
    /// The added file `name` of library folder `path`, nil when there is none of that name.
    func coverNode(_ index: FolderIndex, folder path: String, name: String) -> Node? {
        guard covers.areShown, !options.comicsAsCBZ, index[name] == nil, FolderCovers.firstComic(index) != nil else { return nil }
        switch name {
        case "folder.jpg":
            return FolderCovers.ownPicture(index) == nil && covers.comic(index, identity: coverIdentity) != nil ? .folderCover(path) : nil
        case ".directory": return .folderDesktop(path)
        default: return nil
        }
    }

    /// The file a series folder's listing adds, `folder.jpg`, if any; its making is queued, not
    /// waited for. Its `.directory` is found by name only (`coverNode`), as a comic's is: Dolphin
    /// reads it by its path, and a viewer given the folder would try it as a picture.
    func coverEntry(_ index: FolderIndex, folder path: String) -> (name: String, node: Node)? {
        let name = "folder.jpg"
        guard let node = coverNode(index, folder: path, name: name) else { return nil }
        if case .folderCover = node { queueCover(index, folder: path) }
        return (name, node)
    }

    /// A comic's identity for the covers: one look at its file, nil when it is gone.
    private func coverIdentity(_ comic: String) -> FileIdentity? {
        try? comicIdentity(.library(comic)).get()
    }

    /// Queues the making of the folder's cover unless it is in the cache; the folder is read
    /// again when its turn comes.
    private func queueCover(_ index: FolderIndex, folder path: String) {
        guard let first = covers.comic(index, identity: coverIdentity) else { return }
        covers.queue(folder: path, first: first) { [weak self] in
            guard let self, !self.isStopping, case .success(let index) = self.folderIndex(path) else { return true }
            return self.covers.cover(index, identity: self.coverIdentity, make: { self.makeCover(of: $0, remaking: true) }) != nil
        }
    }

    /// No comic of the folder gives a cover: the kernel drops the `folder.jpg` it was listed with
    /// (`FolderCovers.whenNoCover`).
    func forgetCover(of path: String) {
        let observer = changeObserver
        observer?.nameChanged("folder.jpg", in: .folder(path))
        observer?.nodeChanged(.folder(path))
    }

    func folderDesktopBytes(_ path: String) -> Result<[UInt8], Errno> {
        folderIndex(path).map { FolderCovers.desktopEntry(icon: FolderCovers.ownPicture($0) ?? "folder.jpg") }
    }

    func comicDesktopBytes(_ comic: ComicRef, _ generation: Int) -> Result<[UInt8], Errno> {
        sameGeneration(comic, generation).flatMap { snapshot in
            guard case .success(let listing) = snapshot.listing, let first = listing.pages.first else { return .failure(.ENOENT) }
            return .success(FolderCovers.desktopEntry(icon: first.name))
        }
    }

    /// The cover of a series folder, `CoverSize.bytes` long as it was listed: the first read of
    /// one not made yet waits for its making. EIO when no comic of the folder gives one.
    func folderCoverBytes(_ path: String) -> Result<[UInt8], Errno> {
        guard covers.areShown else { return .failure(.ENOENT) }
        return folderIndex(path).flatMap { index in
            covers.folderFile(index, identity: coverIdentity) { makeCover(of: $0, remaking: true) }
        }
    }

    /// Makes a library comic's cover in a worker and keeps it in the cache (off the FUSE threads).
    /// `remaking`: one in the cache larger than `CoverSize.bytes` (made before covers had a size) is made again.
    func makeCover(of comic: String, remaking: Bool = false) -> Result<[UInt8], Errno> {
        guard covers.areShown else { return .failure(.ENOENT) }
        return currentComic(.library(comic)).flatMap { state, snapshot in
            guard case .success(let listing) = snapshot.listing, let first = listing.pages.first else { return .failure(.ENOENT) }
            let entry = EntryRequest(source: first.source, size: first.size, name: first.sourcePath)
            return covers.cover(of: comic, identity: snapshot.identity, remaking: remaking) { () throws(ComicError) -> [UInt8] in
                try backend.cover(source(of: state), identity: snapshot.identity, entry: entry, height: FolderCovers.height,
                                  limits: options.limits)
            }
        }
    }

    /// Attributes of the added files: the folder's owner and read bits, the size of the bytes
    /// (a cover's listed size: its attributes never wait for it).
    func coverAttributes(_ node: Node) -> Result<NodeAttributes, Errno> {
        let folder: String
        let size: Result<Int, Errno>
        var comic: SourcePermissions?
        switch node {
        case .folderCover(let path):
            folder = path
            guard case .success(let index) = folderIndex(path), let from = covers.comic(index, identity: coverIdentity) else { return .failure(.ENOENT) }
            size = .success(CoverSize.bytes)
            // A folder's cover is readable only by whoever may read the comic it is made from.
            if case .success(let info) = sourceStatus(from.comic, type: S_IFREG) { comic = SourcePermissions(info) }
        case .folderDesktop(let path): (folder, size) = (path, folderDesktopBytes(path).map(\.count))
        case .comicDesktop(let comic, let generation):
            return sameGeneration(comic, generation).flatMap { snapshot in
                comicDesktopBytes(comic, generation).map { fileAttributes(comic, size: Int64($0.count), snapshot) }
            }
        default: return .failure(.ENOENT)
        }
        return size.flatMap { size in
            sourceStatus(folder, type: S_IFDIR).map { info in
                let source = SourcePermissions(info)
                let permissions = comic.map { source.cover(from: $0) } ?? source.page
                return NodeAttributes(kind: .regularFile, size: Int64(size), permissions: permissions,
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
        covers.areShown && !listing.pages.isEmpty && !listing.pages.contains { $0.name == ".directory" }
    }
}

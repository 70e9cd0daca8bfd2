import Foundation
import InkyCore
import InkyTree
import Synchronization

/// Reacting to library changes reported by the watcher: the kernel forgets the names, and
/// changed or new comics are listed (and indexed) in the background, before anyone opens them.
extension LibraryFilesystem {
    /// Starts the inotify watcher (folder libraries only).
    public func startWatching() {
        guard isFolderLibrary else { return }
        let watcher = LibraryWatcher(library: libraryPath) { [weak self] change in self?.libraryChanged(change) }
        watcher.start()
        watching.withLock { $0 = watcher }
        if let blindSpot = watcher.blindSpot {
            logger(.warning("the library watcher cannot see every change (\(blindSpot)): names and attributes are cached for "
                            + "\(Int(options.treeTimeout)) s (--tree-timeout)"))
        } else {
            logger("the library watcher sees every change: names and attributes are kept until they change")
        }
    }

    /// Seconds the kernel may keep names and attributes of folders, comics and files: until the
    /// watcher tells it they changed, when it sees every change; `--tree-timeout` where it
    /// cannot (network filesystems, the inotify watch limit, a mount of one comic file).
    public var treeTimeout: Double { watcherSeesEverything ? Self.watchedTimeout : options.treeTimeout }

    /// The same for a page's name: a page of a changed archive answers ESTALE anyway.
    var pageEntryTimeout: Double { watcherSeesEverything ? Self.watchedTimeout : options.pageEntryTimeout }

    /// A day: "until told" for the kernel, whose timeouts cannot be infinite.
    static let watchedTimeout: Double = 86_400

    var watcherSeesEverything: Bool { watching.withLock { $0 }?.seesEverything ?? false }

    public func stopWatching() {
        watching.withLock { $0 }?.stop()
        root.forgetFolders(under: "")
    }

    func libraryChanged(_ change: LibraryWatcher.Change) {
        switch change {
        case .paths(let paths):
            changeListeners.tell(Array(paths))
            // Folders kept open go first, before the kernel asks again: a folder renamed or
            // replaced is reached afresh (and a link put in its place refused); so do the
            // comics' recent checks, so the comic is looked at again.
            for path in paths { root.forgetFolders(under: path) }
            recentChecks.forget(under: paths)
            catalog.forgetFolders(holding: paths)
            for path in paths.sorted() { pathChanged(path) }
            folderComicPagesChanged(paths)
        case .rescan:
            changeListeners.tell(nil)
            root.forgetFolders(under: "")
            recentChecks.forget(under: [""])
            catalog.forgetFolders(holding: [""])
            let library = libraryPath
            let comics = (try? LibraryIndexer.comicFiles(in: library)) ?? []
            for real in comics where real.hasPrefix(library + "/") { pathChanged(String(real.dropFirst(library.count + 1))) }
        }
    }

    private func pathChanged(_ path: String) {
        let parent = Node.folder(FolderIndex.folder(holding: path))
        let name = FolderIndex.name(of: path)
        let observer = changeObserver
        observer?.nameChanged(name, in: parent)
        // The folder's own mtime and link count changed with it.
        observer?.nodeChanged(parent)
        // A chmod or chown changes who may read the node, and a comic's pages with it: the
        // kernel forgets their attributes (kept for long otherwise) and checks the new ones.
        var changed: [Node] = [.folder(path), .file(path), .link(path)]
        if let snapshot = comicState(.library(path))?.snapshot() {
            changed += Self.files(of: .library(path), snapshot)
            forgetChildren(of: .library(path), snapshot)
        }
        for node in changed { observer?.nodeChanged(node) }
        if options.comicsAsCBZ { folderComicChanged(path) }
        guard ComicFiles.isComicFile(name) else { return }
        if let stem = ComicFiles.displayStem(name) {
            // Every name the comic may show under: its directory's, or its CBZ's or error text's.
            let files = [stem, name].map { $0 + CBZFiles.suffix }
            observer?.namesChanged(options.comicsAsCBZ ? files + files.map({ $0 + CBZFiles.errorSuffix }) : [stem], in: parent)
        }
        observer?.nodeChanged(.comic(.library(path)))
        if case .success = comicIdentity(.library(path)) {
            reindexQueue.async { [weak self] in _ = self?.currentComic(.library(path)) }
        } else {
            indexWriter?.remove(LibraryFile(path: realPath(path)))
        }
    }

    /// Makes the kernel forget the names under a changed comic's directory one by one. Forgetting
    /// the comic's own name is not enough: its directory keeps its inode number, a page whose
    /// dentry a path walk held at that instant is not pruned, and the next lookup of the comic
    /// brings the old directory dentry back with that page under it (the kernel reuses a
    /// directory's one alias), serving the old archive's inode for a day. Never called from
    /// inside a request about that directory: the kernel would wait for the request's reply.
    func forgetChildren(of comic: ComicRef, _ snapshot: ComicState.Snapshot) {
        guard let observer = changeObserver else { return }
        observer.namesChanged(Array(Set(comicChildren(comic, snapshot).map(\.name) + ["ERROR.txt"])), in: .comic(comic))
    }

    /// `--as cbz` shows a folder of loose images as `NAME.cbz`: a folder made, removed or
    /// renamed (`path`), and a page added or changed in one (`path`'s folder), change that file.
    private func folderComicChanged(_ path: String) {
        for folder in [path, FolderIndex.folder(holding: path)] where !folder.isEmpty {
            guard let observer = changeObserver else { return }
            let name = FolderIndex.name(of: folder) + CBZFiles.suffix
            observer.namesChanged([name, name + CBZFiles.errorSuffix], in: .folder(FolderIndex.folder(holding: folder)))
            let comic = ComicRef.library(folder)
            if let snapshot = comicState(comic)?.snapshot() {
                for node in Self.files(of: comic, snapshot) { observer.nodeChanged(node) }
            }
        }
    }
}

/// Who else hears what the library watcher saw (the paths changed, relative to the library; nil
/// when it lost track): `Reading Lists/`, which walks the library again only after a change.
final class LibraryChangeListeners: Sendable {
    private let listeners = Mutex<[@Sendable ([String]?) -> Void]>([])

    func add(_ listener: @escaping @Sendable ([String]?) -> Void) { listeners.withLock { $0.append(listener) } }

    func tell(_ paths: [String]?) {
        for listener in listeners.withLock({ $0 }) { listener(paths) }
    }
}

import Foundation
import InkyCore

/// What the kernel may have cached and must forget when the library changes underneath.
/// The FUSE layer implements it with libfuse's invalidation notifications.
public protocol KernelCacheInvalidating: Sendable {
    func invalidateEntry(parent: NodeID, name: String)
    func invalidateNode(_ id: NodeID)
}

/// Reacting to library changes reported by the watcher: the kernel forgets the names, and
/// changed or new comics are listed (and indexed) in the background, before anyone opens them.
extension LibraryFilesystem {
    /// Starts the inotify watcher (folder libraries only).
    public func startWatching() {
        guard isFolderLibrary else { return }
        let watcher = LibraryWatcher(library: libraryPath) { [weak self] change in self?.libraryChanged(change) }
        watcher.start()
        lock.withLock { self.watcher = watcher }
    }

    public func stopWatching() {
        lock.withLock { watcher }?.stop()
    }

    func libraryChanged(_ change: LibraryWatcher.Change) {
        switch change {
        case .paths(let paths):
            for path in paths.sorted() { pathChanged(path) }
        case .rescan:
            let library = libraryPath
            let comics = (try? LibraryIndexer.comicFiles(in: library)) ?? []
            for real in comics where real.hasPrefix(library + "/") { pathChanged(String(real.dropFirst(library.count + 1))) }
        }
    }

    private func pathChanged(_ path: String) {
        let parent = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let parentID = nodes.id(for: .folder(parent))
        let kernel = kernelCache
        kernel?.invalidateEntry(parent: parentID, name: name)
        // The folder's own mtime and link count changed with it.
        kernel?.invalidateNode(parentID)
        guard ComicFiles.isComicFile(name) else { return }
        if let stem = ComicFiles.displayStem(name) { kernel?.invalidateEntry(parent: parentID, name: stem) }
        kernel?.invalidateNode(nodes.id(for: .comic(path)))
        // A chmod or chown of the archive changes who may read its pages: the kernel forgets
        // their attributes (kept an hour otherwise) and checks the new ones at the next open.
        for page in nodes.ids(where: { $0.comicPath == path }) { kernel?.invalidateNode(page) }
        if case .success = comicIdentity(path) {
            reindexQueue.async { [weak self] in _ = self?.currentComic(path) }
        } else {
            state?.removeFromIndex(realPath(path))
        }
    }
}

import Foundation
import InkyCore
import InkyWorker

/// `--as cbz` shows a folder of loose images as one CBZ, checked like an archive by the folder's
/// size, mtime and inode. A page rewritten in place (same name, same file) moves none of them,
/// so the library watcher's word that a file in such a folder changed is what tells: the comic
/// is then listed again as a new generation. Its CBZ is laid out anew (CRC-32s computed again
/// at its next open), its cached pages are dropped, and a CBZ opened before fails (ESTALE)
/// instead of serving the old bytes or bytes at offsets that moved. Where the watcher cannot
/// see (past the watch limit, a network filesystem) nothing tells: such a comic is listed again
/// when the folder itself changes (a page added, removed or renamed).
extension LibraryFilesystem {
    /// Files the watcher saw change (`paths`): each folder comic holding one is listed again.
    func folderComicPagesChanged(_ paths: Set<String>) {
        guard options.comicsAsCBZ else { return }
        let folders = Set(paths.map { FolderIndex.folder(holding: $0) }).filter { !$0.isEmpty && comicState(.library($0)) != nil }
        for folder in folders.sorted() {
            reindexQueue.async { [weak self] in self?.relistFolderComic(folder) }
        }
    }

    private func relistFolderComic(_ folder: String) {
        let comic = ComicRef.library(folder)
        // A folder whose own identity moved (a page added or removed) is listed again by the next
        // lookup, as any changed comic; so is one never listed.
        guard let state = comicState(comic), let before = state.snapshot(),
              case .success(let identity) = comicIdentity(comic), identity == before.identity else { return }
        let listing: Result<ComicListing, ComicError>
        do throws(ComicError) {
            let (listed, listedIdentity) = try backend.list(.file(realPath(comic)), limits: options.limits)
            guard listedIdentity == identity else { return }
            listing = .success(listed)
        } catch {
            listing = .failure(error)
        }
        guard let previous = state.relist(listing, for: identity, catalog.generations) else { return }
        let generation = state.generation
        pages.cache.drop(comic: comic) { $0.generation != generation }
        if let file = libraryFile(comic) { indexWriter?.store(file, identity: identity, listing) }
        // The kernel forgets the CBZ's name (the next lookup finds the new generation's file)
        // and the old file's cached bytes.
        if let observer = changeObserver {
            let name = FolderIndex.name(of: folder) + CBZFiles.suffix
            observer.namesChanged([name, name + CBZFiles.errorSuffix], in: .folder(FolderIndex.folder(holding: folder)))
            for node in Self.files(of: comic, previous) { observer.nodeChanged(node) }
        }
        logger("\(realPath(comic)): a page changed in place: listed again")
    }
}

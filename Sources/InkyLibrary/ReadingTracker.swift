import Foundation
import InkyCore
import InkyStore
import InkyTree
import Synchronization

/// Reading state and the `Continue Reading/` folder. What counts as reading is `ReadingRule`'s:
/// the mount's reads come in through `noteRead`, the server's pages through `pageReadThrough`;
/// the window cache's prefetch never passes through either.
extension LibraryFilesystem {
    /// A link of `Continue Reading/`: its name and its comic's path in the library.
    public struct ContinueLink: Sendable {
        public var name: String
        public var comic: String
    }

    /// A read of page `key` the kernel asked for, `served` bytes at `offset` of a page of
    /// `length`: recorded once the rule says a person is reading (`ReadingLog.noteRead`).
    func noteRead(_ key: PageCache.Key, offset: Int64, served: Int, length: Int, byReader: Bool) {
        guard options.recordProgress, let reading, !key.comic.isVault else { return }
        guard reading.noteRead(key, offset: offset, served: served, length: length, byReader: byReader),
              let comic = comicState(key.comic), let snapshot = comic.snapshot(), snapshot.generation == key.generation,
              case .success(let listing) = snapshot.listing else { return }
        pageReadThrough(key.index, of: listing.pages.count, comic: comic)
    }

    /// Whether the reads of `caller` are a person reading (`ReaderProcesses`).
    func isReader(_ caller: Caller) -> Bool {
        options.recordProgress && reading?.isReader(caller) == true
    }

    /// Whether a page opened by `caller` must skip what the kernel cached of it: a reader opens
    /// it, and someone whose reads did not count read it since.
    func wantsFreshRead(_ key: PageCache.Key, caller: Caller) -> Bool {
        options.recordProgress && !key.comic.isVault && reading?.wantsFreshRead(key, caller: caller) == true
    }

    /// Page `page` was read through (the mount's rule, or a page streamed whole to a reader):
    /// recorded once the comic is being read (`ReadingSessions`).
    func pageReadThrough(_ page: Int, of pageCount: Int, comic: ComicState) {
        guard options.recordProgress, let reading, let file = libraryFile(comic.comic) else { return }
        reading.pageReadThrough(page, of: pageCount, file: file)
    }

    /// Records pages as read, the last one where the reader stands (`ReadingLog.record`).
    func record(pages: [Int], of pageCount: Int, comic: ComicState) {
        guard options.recordProgress, let reading, let file = libraryFile(comic.comic) else { return }
        reading.record(pages: pages, of: pageCount, file: file)
    }

    /// Waits for queued state writes (reads recorded, listings and rendered page sizes): the
    /// daemon calls it before it exits, so an unmount right after a read loses nothing.
    public func finishStateWrites() {
        stateQueue.sync {
            reading?.writePending()
            indexWriter?.flush()
        }
    }

    /// Forgets where the reader is in `comic` (a library path), as `inkyfs progress forget` does
    /// (bookmarks stay): for `rm` of its link in `Continue Reading/`.
    public func forgetReading(_ comic: String) -> Result<Void, Errno> {
        guard let reading else { return .failure(.ENOENT) }
        return reading.forget(LibraryFile(path: realPath(comic)))
    }

    /// Comics in progress under this library, most recent first, as link names that sort in
    /// that order: "01 - Issue 001", "02 - …".
    public func continueReadingLinks() -> [ContinueLink] {
        guard let state else { return [] }
        stateQueue.sync { reading?.writePending() } // reads just made are visible
        let prefix = libraryPath + "/"
        let comics = state.progress().compactMap { row -> String? in
            guard row.path.hasPrefix(prefix) else { return nil }
            let relative = String(row.path.dropFirst(prefix.count))
            guard case .success(let info) = root.status(relative), info.st_mode & S_IFMT == S_IFREG else { return nil }
            return relative
        }
        let width = max(2, String(comics.count).count)
        return comics.enumerated().compactMap { rank, comic in
            guard let display = displayPath(of: comic) else { return nil }
            let number = String(rank + 1)
            let padded = String(repeating: "0", count: width - number.count) + number
            let name = "\(padded) - \(display.split(separator: "/").last.map(String.init) ?? display)"
            return ContinueLink(name: name, comic: comic)
        }
    }

    /// "../Series/Issue 001": from `Continue Reading/` to the comic's directory.
    public func linkTarget(_ comic: String) -> String? {
        displayPath(of: comic).map { "../" + $0 }
    }

    /// The path under the mount of a comic given by its path in the library (names of comics
    /// lose their extension unless they collide).
    public func displayPath(of comic: String) -> String? {
        let folder = comic.split(separator: "/").dropLast().joined(separator: "/")
        guard case .success(let index) = folderIndex(folder),
              let position = index.position(ofNode: .comic(.library(comic))) else { return nil }
        let display = index.name(position)
        return folder.isEmpty ? display : folder + "/" + display
    }

    /// The library folder holding `path` ("" for the root's entries): where a link into it goes.
    public static func folder(holding path: String) -> String { FolderIndex.folder(holding: path) }

    /// The names the mount shows for the library comics of `folder`, by their path in the
    /// library: many links into one folder named from one listing, not one search each.
    public func comicNames(in folder: String) -> [String: String] {
        var names: [String: String] = [:]
        if case .success(let index) = folderIndex(folder) {
            for (name, node) in index.entries { if case .comic(.library(let path)) = node { names[path] = name } }
        }
        return names
    }
}

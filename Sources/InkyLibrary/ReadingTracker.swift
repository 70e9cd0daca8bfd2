import Foundation
import InkyCore
import InkyStore
import InkyTree
import Synchronization

/// Reading state and the `Continue Reading/` folder. What counts as reading is `ReadingRule`'s:
/// the mount's reads come in through `noteRead`, the server's pages through `pageReadThrough`;
/// the window cache's prefetch never passes through either.
extension LibraryFilesystem {
    struct ContinueLink {
        var name: String
        var comic: String
    }

    /// A read of page `key` the kernel asked for on behalf of `caller`, `served` bytes at
    /// `offset` of a page of `length`: recorded once the rule says a person is reading. A read
    /// that does not count leaves the page marked, so a reader's next open of it is not served
    /// from what the kernel kept of it (`wantsFreshRead`).
    func noteRead(_ key: PageCache.Key, offset: Int64, served: Int, length: Int, byReader: Bool) {
        guard options.recordProgress, state != nil, !key.comic.isVault else { return }
        guard byReader else { return uncountedPages.insert(key) }
        guard pagesReadThrough.add(key, offset: offset, served: served, length: length),
              let comic = comicState(key.comic), let snapshot = comic.snapshot(), snapshot.generation == key.generation,
              case .success(let listing) = snapshot.listing else { return }
        pageReadThrough(key.index, of: listing.pages.count, comic: comic)
    }

    /// Whether a page opened by `caller` must skip what the kernel cached of it: a reader opens
    /// it, and someone whose reads did not count read it since.
    func wantsFreshRead(_ key: PageCache.Key, caller: Caller) -> Bool {
        options.recordProgress && !key.comic.isVault && readers.isReader(caller) && uncountedPages.take(key)
    }

    /// Page `page` was read through (the mount's rule, or a page streamed whole to a reader):
    /// recorded once the comic is being read (`ReadingSessions`).
    func pageReadThrough(_ page: Int, of pageCount: Int, comic: ComicState) {
        guard options.recordProgress, state != nil, let file = libraryFile(comic.comic) else { return }
        let pages = readingSessions.readThrough(file, page: page)
        if !pages.isEmpty { record(pages: pages, of: pageCount, file: file) }
    }

    /// Records pages as read, the last one where the reader stands. Reads wait for the state
    /// queue coalesced per comic, written at most every `PendingReads.interval`: each write
    /// decodes and re-encodes every page seen so far, so one write per page made reading a
    /// 10,000-page comic whole quadratic (61% of the daemon's time). A read after a quiet spell
    /// is written at once; `Continue Reading/` and the daemon's exit write what is pending first.
    func record(pages: [Int], of pageCount: Int, comic: ComicState) {
        guard options.recordProgress, state != nil, let file = libraryFile(comic.comic) else { return }
        record(pages: pages, of: pageCount, file: file)
    }

    private func record(pages: [Int], of pageCount: Int, file: LibraryFile) {
        var delay: TimeInterval?
        for page in pages { delay = pendingReads.add(file, page: page, pageCount: pageCount) ?? delay }
        guard let delay else { return }
        stateQueue.asyncAfter(deadline: .now() + delay) { [self] in writePendingReads() }
    }

    /// On the state queue only.
    private func writePendingReads() {
        guard let state else { return }
        for read in pendingReads.take() {
            // A comic gone meanwhile (moved into the vault, whose `add` purged its rows) must not
            // come back into the state with its name by a write that was only waiting.
            var info = stat()
            if lstat(read.file.path, &info) != 0 && errno == ENOENT { continue }
            state.recordReads(read.file, pages: read.pages, pageCount: read.pageCount)
        }
    }

    /// Waits for queued state writes (reads recorded, listings and rendered page sizes): the
    /// daemon calls it before it exits, so an unmount right after a read loses nothing.
    public func finishStateWrites() {
        stateQueue.sync {
            writePendingReads()
            indexWriter?.flush()
        }
    }

    /// Forgets where the reader is in `comic` (a library path), as `inkyfs progress forget` does
    /// (bookmarks stay): for `rm` of its link in `Continue Reading/`. Its reads still pending are
    /// written first, so none brings it back after, and its reading starts over (two pages again,
    /// `ReadingSessions`) rather than going on from a viewer still open on it.
    func forgetReading(_ comic: String) -> Result<Void, Errno> {
        guard let state else { return .failure(.ENOENT) }
        let file = LibraryFile(path: realPath(comic))
        readingSessions.forget(file)
        return stateQueue.sync {
            writePendingReads()
            do {
                guard try state.forgetProgress(file.path) else { return .failure(.ENOENT) }
                logger("forgot the reading state of \(file.path) (its link in Continue Reading/ was removed)")
                return .success(())
            } catch {
                logger(.error("cannot forget the reading state of \(file.path): \(error)"))
                return .failure(ComicError.io(path: file.path, errno: EIO, detail: "\(error)").errno)
            }
        }
    }

    /// Comics in progress under this library, most recent first, as link names that sort in
    /// that order: "01 - Issue 001", "02 - …".
    func continueReadingLinks() -> [ContinueLink] {
        guard let state else { return [] }
        stateQueue.sync { writePendingReads() } // reads just made are visible
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
    func linkTarget(_ comic: String) -> String? {
        displayPath(of: comic).map { "../" + $0 }
    }

    /// The path under the mount of a comic given by its path in the library (names of comics
    /// lose their extension unless they collide).
    func displayPath(of comic: String) -> String? {
        let folder = comic.split(separator: "/").dropLast().joined(separator: "/")
        guard case .success(let index) = folderIndex(folder),
              let display = index.nodes.first(where: { $0.value == .comic(.library(comic)) })?.key else { return nil }
        return folder.isEmpty ? display : folder + "/" + display
    }
}

/// Pages read and not yet written to the reading state, per comic, in the order last read (so
/// `Continue Reading/` keeps its most-recent-first order).
final class PendingReads: Sendable {
    struct Read: Sendable {
        var file: LibraryFile
        var pages: [Int]
        var pageCount: Int
    }

    /// Seconds between two writes while pages are being read.
    static let interval = 0.25
    private struct State {
        var reads: [Read] = []
        var isScheduled = false
        var lastWrite = Date.distantPast
    }
    private let state = Mutex(State())

    /// Adds a read. Returns the delay after which the caller must write, or nil when a write
    /// is already scheduled.
    func add(_ file: LibraryFile, page: Int, pageCount: Int) -> TimeInterval? {
        state.withLock { state in
            var read = Read(file: file, pages: [], pageCount: pageCount)
            if let index = state.reads.firstIndex(where: { $0.file == file }) { read.pages = state.reads.remove(at: index).pages }
            read.pages.append(page)
            state.reads.append(read)
            if state.isScheduled { return nil }
            state.isScheduled = true
            return max(0, Self.interval + state.lastWrite.timeIntervalSinceNow)
        }
    }

    func take() -> [Read] {
        state.withLock { state in
            defer { state.reads = [] }
            state.isScheduled = false
            state.lastWrite = Date()
            return state.reads
        }
    }
}

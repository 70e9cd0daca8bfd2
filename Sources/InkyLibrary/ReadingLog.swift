import Foundation
import InkyCore
import InkyStore
import InkyTree
import Synchronization

/// The reading log of one mount: what counts as reading (`ReadingRule`: whose reads, which pages
/// read through, which comics being read, which pages the kernel holds from reads that did not
/// count), the pages read waiting to be written, and their writes to the reading state.
///
/// It knows library files and page keys, not nodes or listings: the library finds the comic a
/// read was of (`ReadingTracker`) and says which pages, of how many.
final class ReadingLog: Sendable {
    private let database: StateDatabase
    /// The state queue, off the FUSE threads; the index's writes share it (`IndexWriter`).
    private let queue: DispatchQueue
    private let logger: LogSink
    private let pending = PendingReads()
    private let readers = ReaderProcesses()
    private let pagesReadThrough = PagesReadThrough()
    private let sessions = ReadingSessions()
    private let uncounted = UncountedPages()

    init(database: StateDatabase, queue: DispatchQueue, log: @escaping LogSink) {
        self.database = database
        self.queue = queue
        logger = log
    }

    /// A read of page `key`, `served` bytes at `offset` of a page of `length`: true once, when
    /// it makes the page read through by a reader. A read that does not count leaves the page
    /// marked, so a reader's next open of it is not served from what the kernel kept of it.
    func noteRead(_ key: PageCache.Key, offset: Int64, served: Int, length: Int, byReader: Bool) -> Bool {
        guard byReader else {
            uncounted.insert(key)
            return false
        }
        return pagesReadThrough.add(key, offset: offset, served: served, length: length)
    }

    /// Whether the reads of `caller` are a person reading (`ReaderProcesses`).
    func isReader(_ caller: Caller) -> Bool {
        readers.isReader(caller)
    }

    /// Whether a page opened by `caller` must skip what the kernel cached of it: a reader opens
    /// it, and someone whose reads did not count read it since.
    func wantsFreshRead(_ key: PageCache.Key, caller: Caller) -> Bool {
        readers.isReader(caller) && uncounted.take(key)
    }

    /// Page `page` of `file` was read through: recorded once the comic is being read.
    func pageReadThrough(_ page: Int, of pageCount: Int, file: LibraryFile) {
        let pages = sessions.readThrough(file, page: page)
        if !pages.isEmpty { record(pages: pages, of: pageCount, file: file) }
    }

    /// Records pages as read, the last one where the reader stands. Reads wait for the state
    /// queue coalesced per comic, written at most every `PendingReads.interval`: each write
    /// decodes and re-encodes every page seen so far, so one write per page made reading a
    /// 10,000-page comic whole quadratic (61% of the daemon's time). A read after a quiet spell
    /// is written at once; `Continue Reading/` and the daemon's exit write what is pending first.
    func record(pages: [Int], of pageCount: Int, file: LibraryFile) {
        var delay: TimeInterval?
        for page in pages { delay = pending.add(file, page: page, pageCount: pageCount) ?? delay }
        guard let delay else { return }
        queue.asyncAfter(deadline: .now() + delay) { [self] in writePending() }
    }

    /// Writes the reads still pending. On the state queue only.
    func writePending() {
        for read in pending.take() {
            // A comic gone meanwhile (moved into the vault, whose `add` purged its rows) must not
            // come back into the state with its name by a write that was only waiting.
            var info = stat()
            if lstat(read.file.path, &info) != 0 && errno == ENOENT { continue }
            database.recordReads(read.file, pages: read.pages, pageCount: read.pageCount)
        }
    }

    /// Forgets where the reader is in `file`, as `inkyfs progress forget` does (bookmarks stay).
    /// Its reads still pending are written first, so none brings it back after, and its reading
    /// starts over (two pages again) rather than going on from a viewer still open on it.
    func forget(_ file: LibraryFile) -> Result<Void, Errno> {
        sessions.forget(file)
        return queue.sync {
            writePending()
            do {
                guard try database.forgetProgress(file.path) else { return .failure(.ENOENT) }
                logger("forgot the reading state of \(file.path) (its link in Continue Reading/ was removed)")
                return .success(())
            } catch {
                logger(.error("cannot forget the reading state of \(file.path): \(error)"))
                return .failure(ComicError.io(path: file.path, errno: EIO, detail: "\(error)").errno)
            }
        }
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

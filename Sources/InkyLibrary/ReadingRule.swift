import Foundation
import InkyCore
import Synchronization

/// What counts as reading (docs/usage.md, "Reading state"). Three steps, each against one way
/// reads lie about reading:
///
/// 1. **Who**: the mounting user through a program that shows pages (`ReaderProcesses`), not a
///    thumbnailer, a file manager, `file`, a copy, or another user.
/// 2. **A page read through** (`PagesReadThrough`): its last byte read, and at least half of its
///    bytes. `head -c` and header probes read a start, `tail` an end; a viewer reads all of it
///    (part may already be in the kernel's cache from an earlier read, hence half, not all).
/// 3. **A comic being read** (`ReadingSessions`): two different pages of it read through, each
///    within `gap` of the one before. A one-off `cat`, `cp` or preview of a page reads one page;
///    a person paging reads the next within seconds, a long page within a minute or two.
///
/// "Finished" is the state's (`ReadingProgress.isFinished`): the last page seen, and at least
/// three quarters of the pages.
enum ReadingRule {
    /// Different pages read through before a comic counts as being read.
    static let pagesToStart = 2
    /// Longest time between two pages read through of one reading; after it, a comic starts over.
    static let gap: TimeInterval = 300
    /// Comics (or pages) tracked at once, beyond which those idle past `gap` are dropped.
    static let tracked = 512
}

/// Which pages have been read through, from the ranges the kernel asked for: a page counts once
/// when its last byte and at least half its bytes were read within `ReadingRule.gap`; read
/// through again after that, it counts again.
final class PagesReadThrough: Sendable {
    private struct Reads {
        var offsets: Set<Int64> = []
        var bytes = 0
        var reachedEnd = false
        var counted = false
        var last = Date.distantPast
    }
    private let pages = Mutex<[PageCache.Key: Reads]>([:])

    /// A read of `served` bytes at `offset` of a page of `length` bytes. True once, when it
    /// makes the page read through.
    func add(_ key: PageCache.Key, offset: Int64, served: Int, length: Int, now: Date = Date()) -> Bool {
        pages.withLock { pages in
            if pages.count > ReadingRule.tracked {
                // Pages counted have done their part (counted again, a page is recorded again: harmless):
                // a comic of 10,000 pages read whole keeps this small, not filtered at every read.
                pages = pages.filter { !$0.value.counted && now.timeIntervalSince($0.value.last) < ReadingRule.gap }
                if pages.count > ReadingRule.tracked / 2 { pages = [:] }
            }
            var reads = pages[key].flatMap { now.timeIntervalSince($0.last) < ReadingRule.gap ? $0 : nil } ?? Reads()
            reads.last = now
            if served > 0, reads.offsets.insert(offset).inserted { reads.bytes += served }
            if offset + Int64(served) >= Int64(length) { reads.reachedEnd = true }
            let throughNow = !reads.counted && reads.reachedEnd && reads.bytes * 2 >= length
            if throughNow { reads.counted = true }
            pages[key] = reads
            return throughNow
        }
    }
}

/// Comics' readings in progress, in memory: pages read through wait here until the comic has
/// `ReadingRule.pagesToStart` different ones, each within `ReadingRule.gap` of the one before;
/// from then on each is recorded as it comes.
final class ReadingSessions: Sendable {
    private struct Session {
        var waiting: [Int] = []
        var reading = false
        var last = Date.distantPast
    }
    private let sessions = Mutex<[LibraryFile: Session]>([:])

    /// Page `page` of `file` was read through: the pages to record now, in the order read.
    func readThrough(_ file: LibraryFile, page: Int, now: Date = Date()) -> [Int] {
        sessions.withLock { sessions in
            if sessions.count > ReadingRule.tracked {
                sessions = sessions.filter { now.timeIntervalSince($0.value.last) < ReadingRule.gap }
                if sessions.count > ReadingRule.tracked / 2 { sessions = [:] } // never filtered at every read
            }
            var session = sessions[file].flatMap { now.timeIntervalSince($0.last) < ReadingRule.gap ? $0 : nil } ?? Session()
            session.last = now
            defer { sessions[file] = session }
            if session.reading { return [page] }
            if session.waiting.last != page { session.waiting.append(page) }
            guard Set(session.waiting).count >= ReadingRule.pagesToStart else { return [] }
            session.reading = true
            defer { session.waiting = [] }
            return session.waiting
        }
    }

    /// `file`'s reading was forgotten: its next pages start a reading anew.
    func forget(_ file: LibraryFile) {
        _ = sessions.withLock { $0.removeValue(forKey: file) }
    }
}

/// Pages the kernel may hold in its cache from reads that were not counted (a thumbnailer's,
/// another user's): the next open by a reader drops that cache, so the reader's reads reach the
/// daemon and count. A page a reader read first stays cached for everyone.
final class UncountedPages: Sendable {
    private let pages = Mutex<Set<PageCache.Key>>([])
    static let limit = 4096

    func insert(_ key: PageCache.Key) {
        pages.withLock { pages in
            if pages.count >= Self.limit { pages.removeAll() } // at worst, some cached pages of a thumbnailer's count late
            pages.insert(key)
        }
    }

    /// Whether `key` was read uncounted since; forgets it.
    func take(_ key: PageCache.Key) -> Bool {
        pages.withLock { $0.remove(key) != nil }
    }
}

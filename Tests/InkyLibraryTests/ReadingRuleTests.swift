import Foundation
import InkyCore
import InkyTree
import XCTest
@testable import InkyLibrary

/// The reading rule's parts on their own, where a real mount cannot go: names the kernel cut to
/// 15 bytes, KDE's thumbnailer, and the minutes between pages (MountReadingRuleTests reads
/// through a real mount with real programs).
final class ReadingRuleTests: XCTestCase {
    private func names(_ comm: String, _ executable: String? = nil, _ arguments: [String] = []) -> ReaderProcesses.Names {
        ReaderProcesses.Names(comm: comm, executable: executable, arguments: arguments)
    }

    func testThumbnailersFileManagersAndCopiesAreNoReaders() {
        for comm in ["tumblerd", "Thunar", "pcmanfm", "file", "cp", "sha256sum", "ffmpegthumbnail", "gdk-pixbuf-thum", "evince-thumbnai"] {
            XCTAssertTrue(ReaderProcesses.isNonReader(names(comm)), comm)
        }
        XCTAssertTrue(ReaderProcesses.isNonReader(names("pool-3", "gdk-pixbuf-thumbnailer")), "by its executable")
        XCTAssertTrue(ReaderProcesses.isNonReader(names("kioworker", "kioworker", ["/usr/lib/kf6/kioworker", "/usr/lib/qt6/plugins/kf6/kio/thumbnail.so"])))
        XCTAssertFalse(ReaderProcesses.isNonReader(names("kioworker", "kioworker", ["/usr/lib/kf6/kioworker", "/usr/lib/qt6/plugins/kf6/kio/file.so"])),
                       "KIO's other workers are not thumbnailers")
        for comm in ["feh", "eog", "cat", "nsxiv", "gwenview", "zathura", "qimgv", "inkyfsPackageTests.xctest", "thumbs"] {
            XCTAssertFalse(ReaderProcesses.isNonReader(names(comm, comm)), comm)
        }
        XCTAssertFalse(ReaderProcesses.isNonReader(names("cat", "cat", ["cat", "thumbnail.jpg"])), "a file's name is not a program's")
    }

    func testAnotherUserIsNoReaderAndThisProcessIs() {
        let readers = ReaderProcesses(owner: getuid())
        XCTAssertTrue(readers.isReader(.thisProcess))
        XCTAssertFalse(readers.isReader(Caller(pid: getpid(), uid: getuid() &+ 1)))
        XCTAssertTrue(readers.isReader(Caller(pid: 0, uid: getuid())), "a thread the kernel could not name")
    }

    func testAPageIsReadThroughAtItsEndWithHalfItsBytes() {
        let reads = PagesReadThrough()
        let key = PageCache.Key(comic: .library("a.cbz"), generation: 0, index: 3)
        XCTAssertFalse(reads.add(key, offset: 0, served: 16_384, length: 100_000), "a head")
        XCTAssertFalse(reads.add(key, offset: 90_000, served: 10_000, length: 100_000), "and a tail: 26% of it")
        XCTAssertTrue(reads.add(key, offset: 16_384, served: 40_000, length: 100_000), "the middle too")
        XCTAssertFalse(reads.add(key, offset: 0, served: 100_000, length: 100_000), "counted once")
        let tail = PageCache.Key(comic: .library("a.cbz"), generation: 0, index: 4)
        XCTAssertFalse(reads.add(tail, offset: 60_000, served: 40_000, length: 100_000), "its end, 40% of it")
        XCTAssertTrue(reads.add(tail, offset: 0, served: 16_384, length: 100_000), "and its start: 56%")
        let later = Date().addingTimeInterval(ReadingRule.gap + 1)
        XCTAssertTrue(reads.add(key, offset: 0, served: 100_000, length: 100_000, now: later), "read through again, later")
    }

    func testAComicIsBeingReadAfterTwoPagesWithinTheGap() {
        let sessions = ReadingSessions()
        let file = LibraryFile(path: "/lib/a.cbz")
        let start = Date()
        XCTAssertEqual(sessions.readThrough(file, page: 9, now: start), [], "one page: a one-off")
        XCTAssertEqual(sessions.readThrough(file, page: 9, now: start.addingTimeInterval(1)), [], "the same page again")
        XCTAssertEqual(sessions.readThrough(file, page: 0, now: start.addingTimeInterval(2)), [9, 0])
        XCTAssertEqual(sessions.readThrough(file, page: 1, now: start.addingTimeInterval(60)), [1], "being read: at once")
        let away = start.addingTimeInterval(60 + ReadingRule.gap + 1)
        XCTAssertEqual(sessions.readThrough(file, page: 2, now: away), [], "after the gap it starts over")
        XCTAssertEqual(sessions.readThrough(LibraryFile(path: "/lib/b.cbz"), page: 3, now: away), [], "another comic's page")
        XCTAssertEqual(sessions.readThrough(file, page: 3, now: away.addingTimeInterval(ReadingRule.gap - 1)), [2, 3])
    }
}

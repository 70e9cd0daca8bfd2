import Foundation
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyLibrary

final class RecentComicChecksTests: XCTestCase {
    /// A clock the test moves by hand.
    final class Clock: @unchecked Sendable {
        var now: UInt64 = 1_000
    }

    private func check(size: Int64) -> ComicCheck {
        var info = stat()
        info.st_size = Int(size)
        info.st_mode = S_IFREG | 0o644
        return ComicCheck(info)
    }

    func testAStoredCheckLastsOneSecond() {
        let clock = Clock()
        let checks = RecentComicChecks { clock.now }
        checks.store("A/1.cbz", check(size: 7))
        clock.now += RecentComicChecks.lifetime - 1
        XCTAssertEqual(checks.check("A/1.cbz")?.identity.size, 7)
        clock.now += 1
        XCTAssertNil(checks.check("A/1.cbz"), "a second old: looked at again")
        XCTAssertNil(checks.check("A/2.cbz"))
    }

    func testForgettingAPathTakesWhatIsBeneathItAndNothingElse() {
        let checks = RecentComicChecks()
        for path in ["A/1.cbz", "A/B/2.cbz", "AB/3.cbz", "A.cbz", "C/D/4.cbz", "C/5.cbz"] { checks.store(path, check(size: 1)) }
        checks.forget(under: ["A", "C/D"])
        XCTAssertNil(checks.check("A/1.cbz"))
        XCTAssertNil(checks.check("A/B/2.cbz"))
        XCTAssertNil(checks.check("C/D/4.cbz"))
        XCTAssertNotNil(checks.check("AB/3.cbz"), "a sibling whose name starts the same stays")
        XCTAssertNotNil(checks.check("A.cbz"))
        XCTAssertNotNil(checks.check("C/5.cbz"), "the folder above a forgotten one stays")
        checks.forget(under: ["A.cbz"])
        XCTAssertNil(checks.check("A.cbz"), "a comic's own path")
        checks.forget(under: [""])
        XCTAssertEqual(checks.count, 0)
    }

    func testAFullCacheDropsTheExpiredFirstThenEverything() {
        let clock = Clock()
        let checks = RecentComicChecks { clock.now }
        for n in 0..<RecentComicChecks.capacity / 2 { checks.store("old/\(n).cbz", check(size: 1)) }
        clock.now += RecentComicChecks.lifetime
        for n in 0..<RecentComicChecks.capacity / 2 { checks.store("new/\(n).cbz", check(size: 2)) }
        checks.store("one more.cbz", check(size: 3))
        XCTAssertEqual(checks.count, RecentComicChecks.capacity / 2 + 1, "the expired half went")
        XCTAssertEqual(checks.check("new/0.cbz")?.identity.size, 2)
        for n in 0..<RecentComicChecks.capacity { checks.store("newer/\(n).cbz", check(size: 4)) }
        XCTAssertLessThanOrEqual(checks.count, RecentComicChecks.capacity)
        XCTAssertEqual(checks.check("newer/\(RecentComicChecks.capacity - 1).cbz")?.identity.size, 4, "the last stored stays")
    }

    /// A folder's listing keeps what it saw of its comics, which the listing paths then use; a
    /// change the watcher reports makes the comic looked at again, whatever its age.
    func testAFolderListingKeepsItsComicsChecksUntilTheWatcherSeesAChange() throws {
        let library = ArchiveMaker.temporaryDirectory("lib")
        defer { try? FileManager.default.removeItem(at: library) }
        let comic = library.appendingPathComponent("A.cbz")
        try ArchiveMaker.zip(at: comic, members: [("1.jpg", [1, 1, 1])])
        let filesystem = LibraryFilesystem(library: library.path, options: MountOptions(),
                                           backend: LibraryFilesystemTests.InProcessBackend())
        XCTAssertEqual(try filesystem.unnumberedEntries(of: filesystem.rootNode).get().map(\.name), ["A"])
        let seen = try XCTUnwrap(filesystem.recentChecks.check("A.cbz"), "the folder's listing stored the comic's lstat")
        XCTAssertEqual(seen.identity, try FileIdentity.of(comic.path).get())

        try ArchiveMaker.zip(at: comic, members: [("1.jpg", [2, 2]), ("2.jpg", [3])])
        filesystem.libraryChanged(.paths(["A.cbz"]))
        XCTAssertEqual(try filesystem.listedComicCheck(.library("A.cbz")).get().identity, try FileIdentity.of(comic.path).get())
    }
}

import Foundation
import InkyCore
import XCTest
@testable import InkyStore

final class StateDatabaseTests: XCTestCase {
    private var folder: URL!

    override func setUp() {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID().uuidString)")
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private var path: String { folder.appendingPathComponent("inkyfs/state.sqlite").path }

    private func listing(_ pages: Int) -> ComicListing {
        ComicListing(format: .zip, pages: (0..<pages).map { Page(number: $0, name: String(format: "%03d.jpg", $0 + 1), sourcePath: "p\($0).jpg", entryIndex: $0, size: 10) },
                     comicInfo: nil, skipped: [], isSolid: false)
    }

    func testAMissingStateFolderIsCreatedAndTheSchemaIsCurrent() {
        let state = StateDatabase.open(at: path)
        XCTAssertNil(state.recovery)
        XCTAssertEqual(state.schemaVersion, 11)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
    }

    /// v3 drops listings made while libarchive lost every non-ASCII page name (they would
    /// hide those pages until the archive changed); reading state stays.
    func testOlderDatabasesMigrateDroppingListingsFromBeforeAccentedNamesAndKeepingReadingState() throws {
        try assertMigrationFrom(version: 2, dropsListings: "listed again by the current parser")
    }

    /// v4 drops listings made before stored ZIP pages named their data range (those pages
    /// would go through a worker until the archive changed); reading state stays.
    func testVersion3DatabasesDropListingsWithoutStoredRanges() throws {
        try assertMigrationFrom(version: 3, dropsListings: "listed again, with stored ranges")
    }

    /// v7 drops listings made before workers sent each comic's metadata (the views would miss
    /// every comic until it changed); reading state stays.
    func testVersion6DatabasesDropListingsWithoutMetadata() throws {
        try assertMigrationFrom(version: 6, dropsListings: "listed again, with metadata")
    }

    /// v11 drops the listings whose metadata came from the file name alone (`Issue 001.cbz` was
    /// series "Issue"; it now takes its folder's), and keeps those tagged inside the archive.
    func testVersion10DatabasesListAgainTheComicsNamedByTheirFileNameAlone() throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let old = try Database(path: path)
        try Migrator(StateSchema.migrator.migrations.prefix(10).map { ($0.version, $0.sql) }).migrate(old)
        XCTAssertEqual(try old.userVersion(), 10)
        let json = String(decoding: try JSONEncoder().encode(listing(3)), as: UTF8.self)
        for (file, source) in [("/lib/Batman/Issue 001.cbz", "fileName"), ("/lib/Batman/Batman 002.cbz", "comicInfo")] {
            try old.execute("INSERT INTO comic_index (path, size, mtime_ns, inode, listing, error, indexed_at) VALUES ('\(file)', 5, 7, 9, '\(json)', NULL, 0)")
            try old.execute("INSERT INTO comic_metadata (path, size, mtime_ns, inode, source, series) VALUES ('\(file)', 5, 7, 9, '\(source)', 'Issue')")
        }
        let state = StateDatabase.open(at: path)
        XCTAssertEqual(state.schemaVersion, 11)
        let identity = FileIdentity(size: 5, modifiedNanoseconds: 7, inode: 9)
        XCTAssertNil(state.indexedListing(LibraryFile(path: "/lib/Batman/Issue 001.cbz"), identity: identity), "listed again, series from its folder")
        XCTAssertNotNil(state.indexedListing(LibraryFile(path: "/lib/Batman/Batman 002.cbz"), identity: identity), "its own tags: kept")
    }

    /// A database at `version` with one indexed listing and one reading row, opened now: the
    /// listing is gone, the reading state kept.
    private func assertMigrationFrom(version: Int, dropsListings why: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let old = try Database(path: path)
        try Migrator(StateSchema.migrator.migrations.prefix(version).map { ($0.version, $0.sql) }).migrate(old)
        XCTAssertEqual(try old.userVersion(), version)
        let identity = FileIdentity(size: 5, modifiedNanoseconds: 7, inode: 9)
        try old.execute("INSERT INTO comic_index (path, size, mtime_ns, inode, listing, error, indexed_at) VALUES ('/lib/a.cbz', 5, 7, 9, '\(String(decoding: try JSONEncoder().encode(listing(3)), as: UTF8.self))', NULL, 0)")
        try old.execute("INSERT INTO reading VALUES ('/lib/a.cbz', 3, 1, '[0,1]', 0)")
        let state = StateDatabase.open(at: path)
        XCTAssertEqual(state.schemaVersion, 11)
        XCTAssertNil(state.indexedListing(LibraryFile(path: "/lib/a.cbz"), identity: identity), why)
        XCTAssertEqual(state.progress().count, 1, "reading state is kept")
    }

    func testACorruptDatabaseIsMovedAsideAndRebuilt() throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 0x42, count: 10_000).write(to: URL(fileURLWithPath: path))
        let state = StateDatabase.open(at: path)
        XCTAssertNotNil(state.recovery)
        XCTAssertTrue(state.recovery!.contains("moved it to"), state.recovery!)
        XCTAssertEqual(state.schemaVersion, 11)
        let folderContents = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
        XCTAssertTrue(folderContents.contains { $0.hasPrefix("state.sqlite.damaged-") }, "\(folderContents)")
    }

    func testTheIndexIsKeyedByPathSizeMtimeAndInode() {
        let state = StateDatabase.open(at: path)
        let identity = FileIdentity(size: 100, modifiedNanoseconds: 1_000, inode: 42)
        state.storeListing(LibraryFile(path: "/lib/a.cbz"), identity: identity, .success(listing(4)))
        XCTAssertEqual(try state.indexedListing(LibraryFile(path: "/lib/a.cbz"), identity: identity)?.get(), listing(4))
        for changed in [FileIdentity(size: 101, modifiedNanoseconds: 1_000, inode: 42), FileIdentity(size: 100, modifiedNanoseconds: 1_001, inode: 42),
                        FileIdentity(size: 100, modifiedNanoseconds: 1_000, inode: 43)] {
            XCTAssertNil(state.indexedListing(LibraryFile(path: "/lib/a.cbz"), identity: changed))
        }
        state.storeListing(LibraryFile(path: "/lib/b.cbr"), identity: identity, .failure(.encrypted(path: "/lib/b.cbr")))
        XCTAssertEqual(state.indexedListing(LibraryFile(path: "/lib/b.cbr"), identity: identity).map { (try? $0.get()) == nil }, true)
        state.storeListing(LibraryFile(path: "/lib/c.cbz"), identity: identity, .failure(.parserFailed(path: "/lib/c.cbz", detail: "crashed")))
        XCTAssertNil(state.indexedListing(LibraryFile(path: "/lib/c.cbz"), identity: identity), "a crash may be passing: not remembered")
        state.removeFromIndex(LibraryFile(path: "/lib/a.cbz"))
        XCTAssertNil(state.indexedListing(LibraryFile(path: "/lib/a.cbz"), identity: identity))
    }

    /// A folder's comics read in one transaction (listing ahead) answer as one lookup each
    /// would, through the index lookups' own connection, and see what the writer committed.
    func testAFoldersComicsAreReadAndCheckedInOneGoAsOneByOne() {
        let state = StateDatabase.open(at: path)
        let identity = FileIdentity(size: 100, modifiedNanoseconds: 1_000, inode: 42)
        let changed = FileIdentity(size: 100, modifiedNanoseconds: 1_001, inode: 42)
        state.storeListing(LibraryFile(path: "/lib/a.cbz"), identity: identity, .success(listing(4)))
        state.storeListing(LibraryFile(path: "/lib/b.cbr"), identity: identity, .failure(.encrypted(path: "/lib/b.cbr")))
        let asked = [(LibraryFile(path: "/lib/a.cbz"), identity), (LibraryFile(path: "/lib/a.cbz"), changed),
                     (LibraryFile(path: "/lib/b.cbr"), identity), (LibraryFile(path: "/lib/none.cbz"), identity)]
        let found = state.indexedListings(asked.map { (file: $0.0, identity: $0.1) })
        XCTAssertEqual(found.count, 4)
        XCTAssertEqual(try found[0]?.get(), listing(4))
        XCTAssertNil(found[1], "another identity is another file")
        XCTAssertEqual(found[2].map { (try? $0.get()) == nil }, true, "a stored error")
        XCTAssertNil(found[3])
        XCTAssertEqual(state.areIndexed(asked.map { (file: $0.0, identity: $0.1) }), [true, false, true, false])
        XCTAssertEqual(state.areIndexed(asked.map { (file: $0.0, identity: $0.1) }), found.map { $0 != nil }, "as the rows read")
        state.storeListing(LibraryFile(path: "/lib/none.cbz"), identity: identity, .success(listing(2)))
        XCTAssertEqual(try state.indexedListings([(file: LibraryFile(path: "/lib/none.cbz"), identity: identity)])[0]?.get(), listing(2),
                       "the reading connection sees the new row")
    }

    func testReadingStateOrderFinishedAndBookmarks() throws {
        let state = StateDatabase.open(at: path)
        let start = Date(timeIntervalSince1970: 1_000_000)
        state.recordRead(LibraryFile(path: "/lib/a.cbz"), page: 2, pageCount: 10, at: start)
        state.recordRead(LibraryFile(path: "/lib/b.cbz"), page: 0, pageCount: 3, at: start.addingTimeInterval(10))
        state.recordReads(LibraryFile(path: "/lib/c.cbz"), pages: [0, 1, 2, 4], pageCount: 5, at: start.addingTimeInterval(20))
        XCTAssertEqual(state.progress().map(\.path), ["/lib/b.cbz", "/lib/a.cbz"], "most recent first, finished left out")
        XCTAssertEqual(state.progress(includeFinished: true).map(\.path), ["/lib/c.cbz", "/lib/b.cbz", "/lib/a.cbz"])
        // Its last page touched, a quarter of it skipped: read through. The last page alone is not.
        XCTAssertTrue(try XCTUnwrap(state.progress(includeFinished: true).first).isFinished)
        XCTAssertFalse(ReadingProgress(path: "x", pageCount: 5, lastPage: 4, pagesSeen: [4], updatedAt: start).isFinished)
        XCTAssertFalse(ReadingProgress(path: "x", pageCount: 8, lastPage: 7, pagesSeen: [0, 1, 2, 3, 7], updatedAt: start).isFinished,
                       "5 of 8 pages: fewer than three quarters")
        XCTAssertTrue(ReadingProgress(path: "x", pageCount: 8, lastPage: 7, pagesSeen: [0, 1, 2, 3, 4, 7], updatedAt: start).isFinished)
        state.recordRead(LibraryFile(path: "/lib/a.cbz"), page: 3, pageCount: 10, at: start.addingTimeInterval(30))
        let a = try XCTUnwrap(state.progress().first)
        XCTAssertEqual(a.path, "/lib/a.cbz")
        XCTAssertEqual(a.lastPage, 3)
        XCTAssertEqual(a.pagesSeen, [2, 3])
        XCTAssertEqual(a.percent, 40)
        try state.addBookmark("/lib/a.cbz", page: 7)
        try state.addBookmark("/lib/a.cbz", page: 1)
        XCTAssertEqual(state.progress().first?.bookmarks, [1, 7])
        XCTAssertEqual(try state.removeBookmark("/lib/a.cbz", page: 7), 1)
        XCTAssertEqual(try state.removeBookmark("/lib/a.cbz", page: nil), 1)
        XCTAssertEqual(state.bookmarks("/lib/a.cbz"), [])
    }
}

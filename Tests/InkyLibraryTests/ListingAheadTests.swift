import Foundation
import InkyCore
import InkyWorker
import InkyStore
import InkyTestSupport
import XCTest
@testable import InkyLibrary
import InkyTree

/// After mounting, the whole library is listed in the order a recursive listing reaches it.
final class ListingAheadTests: XCTestCase {
    /// Real archives opened in process, with the order they were listed in.
    final class RecordingBackend: ComicBackend, @unchecked Sendable {
        private let lock = NSLock()
        private var paths: [String] = []
        private let real = LibraryFilesystemTests.InProcessBackend()

        var listed: [String] { lock.withLock { paths } }

        func list(_ source: ComicSource, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity) {
            lock.withLock { paths.append(source.path) }
            return try real.list(source, limits: limits)
        }

        func read(_ source: ComicSource, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits,
                  deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) {
            try real.read(source, identity: identity, entries: entries, limits: limits, deliver: deliver)
        }

        func comicInfo(_ source: ComicSource, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]? {
            try real.comicInfo(source, identity: identity, limits: limits)
        }
    }

    private var library: URL!
    private var stateFolder: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("ahead")
        stateFolder = ArchiveMaker.temporaryDirectory("ahead-state")
        for comic in ["D.cbz", "B/x.cbz", "A.cbz", "B/C/y.cbz", "B/10.cbz", "B/2.cbz"] {
            let url = library.appendingPathComponent(comic)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try ArchiveMaker.zip(at: url, members: [("1.jpg", Array(comic.utf8))])
        }
        try Data("not a comic".utf8).write(to: library.appendingPathComponent("B/notes.txt"))
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: stateFolder)
    }

    private func listAhead(parallelism: Int, state: StateDatabase?) -> (LibraryFilesystem, RecordingBackend, Int) {
        var options = MountOptions()
        options.listLibraryAhead = true
        options.listingParallelism = parallelism
        let backend = RecordingBackend()
        let filesystem = LibraryFilesystem(library: library.path, options: options, backend: backend, state: state)
        let done = DispatchSemaphore(value: 0)
        let count = LockedCount()
        filesystem.listLibraryAhead { listed, _ in
            count.set(listed)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "listing ahead finished")
        return (filesystem, backend, count.value)
    }

    func testEveryComicIsListedDepthFirstInByteOrderOfNames() {
        // One listing thread (parallelism 2 keeps one worker free): the order is exact.
        let (filesystem, backend, count) = listAhead(parallelism: 2, state: nil)
        XCTAssertEqual(count, 6)
        XCTAssertEqual(backend.listed.map { String($0.dropFirst(library.path.count + 1)) },
                       ["A.cbz", "B/10.cbz", "B/2.cbz", "B/C/y.cbz", "B/x.cbz", "D.cbz"], "the order ls -R reaches them in (C locale)")
        XCTAssertEqual(filesystem.backendListings, 6)
    }

    func testAWarmIndexListsAheadWithoutOpeningAnArchive() {
        let database = stateFolder.appendingPathComponent("state.sqlite").path
        let first = listAhead(parallelism: 4, state: StateDatabase.open(at: database))
        XCTAssertEqual(Set(first.1.listed).count, 6, "each comic listed once")
        XCTAssertEqual(first.1.listed.count, 6)
        first.0.finishStateWrites()
        let second = listAhead(parallelism: 4, state: StateDatabase.open(at: database))
        XCTAssertEqual(second.2, 6)
        XCTAssertEqual(second.1.listed, [], "every listing came from the index")
    }

    /// `ls -lR` enters a folder's comics right after listing it: on a warm index they are read
    /// from it in the background, in one transaction, and a changed one is listed by a worker.
    func testAListedFolderLoadsItsIndexedComicsAheadAndListsOnlyTheChangedOne() throws {
        let database = stateFolder.appendingPathComponent("state.sqlite").path
        let first = listAhead(parallelism: 4, state: StateDatabase.open(at: database))
        first.0.finishStateWrites()
        let changed = library.appendingPathComponent("B/x.cbz")
        try ArchiveMaker.zip(at: changed, members: [("1.jpg", [9]), ("2.jpg", [8])])
        let written = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: changed.path)[.modificationDate] as? Date)
        try FileManager.default.setAttributes([.modificationDate: written.addingTimeInterval(1)], ofItemAtPath: changed.path)

        var options = MountOptions()
        options.listingParallelism = 4
        let backend = RecordingBackend()
        let second = LibraryFilesystem(library: library.path, options: options, backend: backend, state: StateDatabase.open(at: database))
        let folder = try second.lookup("B", in: second.rootNode).get().node
        second.directoryListed(folder)
        let comics = ["10.cbz", "2.cbz", "x.cbz"].map { ComicRef.library("B/" + $0) }
        XCTAssertTrue(waitUntil(20) { comics.allSatisfy { second.comicState($0)?.snapshot() != nil } }, "B's comics loaded ahead")
        XCTAssertEqual(backend.listed, [changed.path], "only the changed comic opened")
        XCTAssertEqual(second.backendListings, 1)
        let pages = try second.unnumberedEntries(of: second.lookup("x", in: folder).get().node).get()
        XCTAssertEqual(pages.count, 2, "the changed comic's new pages")
    }

    /// `ls -R` enters the folder after a listed one next: its comics the index holds are loaded
    /// too, so they are ready before they are asked for; unindexed ones there wait for their own
    /// folder's listing (no worker is taken from the folder being read), and nothing further on is loaded.
    func testAListedFolderAlsoLoadsTheIndexedComicsOfTheFolderAfterIt() throws {
        let database = try indexedLibrary(of: ["E/e1.cbz", "E/e2.cbz", "F/f1.cbz", "F/f2.cbz", "G/g1.cbz", "G/g2.cbz"])
        try ArchiveMaker.zip(at: library.appendingPathComponent("F/f3.cbz"), members: [("1.jpg", [7])])
        let (second, backend) = remounted(database)
        second.directoryListed(try second.lookup("E", in: second.rootNode).get().node)
        let next = ["F/f1.cbz", "F/f2.cbz"].map { ComicRef.library($0) }
        XCTAssertTrue(waitUntil(20) { next.allSatisfy { second.comicState($0)?.snapshot() != nil } }, "F's indexed comics loaded ahead")
        XCTAssertTrue(["E/e1.cbz", "E/e2.cbz"].allSatisfy { second.comicState(.library($0))?.snapshot() != nil })
        XCTAssertEqual(backend.listed, [], "from the index only: F/f3.cbz, not in it, waits for F's own listing")
        XCTAssertNil(second.comicState(.library("F/f3.cbz"))?.snapshot())
        XCTAssertNil(second.comicState(.library("G/g1.cbz"))?.snapshot(), "one folder ahead, not more")
    }

    /// The walk `ls -R` makes: a publisher's folder is followed by its first series, and its last
    /// series by the next publisher's first. Both were loaded only once `ls` was in them.
    func testTheFolderAWalkEntersNextIsLoadedThroughFoldersOfFolders() throws {
        let database = try indexedLibrary(of: ["P1/S1/a1.cbz", "P1/S1/a2.cbz", "P1/S2/b1.cbz", "P1/S2/b2.cbz", "P2/S1/c1.cbz", "P2/S1/c2.cbz"])
        let (second, backend) = remounted(database)
        let loaded = { (paths: [String]) in paths.allSatisfy { second.comicState(.library($0))?.snapshot() != nil } }
        let publisher = try second.lookup("P1", in: second.rootNode).get().node
        second.directoryListed(publisher)
        XCTAssertTrue(waitUntil(20) { loaded(["P1/S1/a1.cbz", "P1/S1/a2.cbz"]) }, "a publisher's first series")
        let last = try second.lookup("S2", in: publisher).get().node
        second.directoryListed(last)
        XCTAssertTrue(waitUntil(20) { loaded(["P2/S1/c1.cbz", "P2/S1/c2.cbz"]) }, "after a publisher's last series, the next publisher's first")
        XCTAssertEqual(backend.listed, [], "all from the index")
    }

    /// Writes `comics` (one page each, its path as its bytes) and indexes them by listing the
    /// library ahead once; returns the state database's path.
    private func indexedLibrary(of comics: [String]) throws -> String {
        for comic in comics {
            let url = library.appendingPathComponent(comic)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try ArchiveMaker.zip(at: url, members: [("1.jpg", Array(comic.utf8))])
        }
        let database = stateFolder.appendingPathComponent("state.sqlite").path
        let first = listAhead(parallelism: 4, state: StateDatabase.open(at: database))
        first.0.finishStateWrites()
        return database
    }

    /// The library mounted again on that index, with a backend that records what it lists.
    private func remounted(_ database: String) -> (LibraryFilesystem, RecordingBackend) {
        var options = MountOptions()
        options.listingParallelism = 4
        let backend = RecordingBackend()
        return (LibraryFilesystem(library: library.path, options: options, backend: backend, state: StateDatabase.open(at: database)), backend)
    }

    func testOffByDefaultAndStopsAtUnmount() {
        let backend = RecordingBackend()
        let lazy = LibraryFilesystem(library: library.path, options: MountOptions(), backend: backend)
        lazy.listLibraryAhead { _, _ in XCTFail("MountOptions() lists lazily") }
        var options = MountOptions()
        options.listLibraryAhead = true
        let stopped = LibraryFilesystem(library: library.path, options: options, backend: backend)
        stopped.stopBackgroundWork()
        let done = DispatchSemaphore(value: 0)
        stopped.listLibraryAhead { _, _ in done.signal() }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(backend.listed, [], "nothing listed once stopping")
    }
}

private final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func set(_ value: Int) { lock.withLock { count = value } }
}

import Foundation
import InkyArchive
import InkyCore
import InkyStore
import InkyTestSupport
import InkyMount
import XCTest
@testable import InkyLibrary
import InkyTree
@testable import InkyWorker

/// The index saves opening archives at remount; reading state counts real reads only.
final class LibraryIndexTests: XCTestCase {
    private var stateFolder: URL!

    override func setUp() { stateFolder = ArchiveMaker.temporaryDirectory("state") }
    override func tearDown() { try? FileManager.default.removeItem(at: stateFolder) }

    /// Numbered as a mount numbers it: the listings reach comics by the numbers they give.
    private func filesystem(_ library: String, _ state: StateDatabase) -> NumberedLibrary {
        NumberedLibrary(LibraryFilesystem(library: library, options: MountOptions(), backend: LibraryFilesystemTests.InProcessBackend(), state: state))
    }

    /// Looks up every comic of the fixtures' comic folders, as `ls -l` of each would.
    private func listAll(_ filesystem: NumberedLibrary) throws -> Int {
        var pages = 0
        for folder in ["Space Patrol", "Moon Tales", "Real", "Broken"] {
            let id = try filesystem.lookup(parent: NumberedLibrary.rootID, name: folder).get().id
            for entry in try filesystem.directoryEntries(of: id).get() where entry.kind == .directory {
                pages += try filesystem.directoryEntries(of: entry.id).get().count
            }
        }
        return pages
    }

    func testARemountListsFromTheIndexWithoutOpeningArchives() throws {
        let database = stateFolder.appendingPathComponent("state.sqlite").path
        let first = filesystem(Corpus.fixtures.path, StateDatabase.open(at: database))
        let pages = try listAll(first)
        XCTAssertEqual(first.core.backendListings, 10, "the first mount lists every comic")
        // Index writes are queued and made in batches; an unmount waits for them, as here.
        first.core.finishStateWrites()
        let second = filesystem(Corpus.fixtures.path, StateDatabase.open(at: database))
        XCTAssertEqual(try listAll(second), pages, "same tree from the index")
        XCTAssertEqual(second.core.backendListings, 0, "no archive opened on a warm remount")
    }

    func testAChangedArchiveIsListedAgainAloneAndItsOldPagesAreGone() throws {
        let library = ArchiveMaker.temporaryDirectory("lib")
        defer { try? FileManager.default.removeItem(at: library) }
        try ArchiveMaker.zip(at: library.appendingPathComponent("A.cbz"), members: [("1.jpg", [1])])
        try ArchiveMaker.zip(at: library.appendingPathComponent("B.cbz"), members: [("1.jpg", [2])])
        let database = stateFolder.appendingPathComponent("state.sqlite").path
        let first = filesystem(library.path, StateDatabase.open(at: database))
        for name in ["A", "B"] { _ = try first.directoryEntries(of: first.lookup(parent: 1, name: name).get().id).get() }
        first.core.finishStateWrites()
        let changed = library.appendingPathComponent("B.cbz")
        try ArchiveMaker.zip(at: changed, members: [("1.jpg", [3]), ("2.jpg", [4])])
        // A new mtime, set rather than waited for (a second's sleep, on a coarse-timestamp filesystem).
        let written = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: changed.path)[.modificationDate] as? Date)
        try FileManager.default.setAttributes([.modificationDate: written.addingTimeInterval(1)], ofItemAtPath: changed.path)
        let second = filesystem(library.path, StateDatabase.open(at: database))
        XCTAssertEqual(try second.directoryEntries(of: second.lookup(parent: 1, name: "A").get().id).get().count, 1)
        XCTAssertEqual(try second.directoryEntries(of: second.lookup(parent: 1, name: "B").get().id).get().count, 2)
        XCTAssertEqual(second.core.backendListings, 1, "only the changed comic is listed again")
    }

    func testOnlyRealReadsCountAsReadingNotPrefetch() throws {
        let state = StateDatabase.open(at: stateFolder.appendingPathComponent("state.sqlite").path)
        let fs = filesystem(Corpus.fixtures.path, state)
        let series = try fs.lookup(parent: 1, name: "Moon Tales").get().id
        let comic = try fs.lookup(parent: series, name: "Moon Tales 01").get().id
        func read(_ name: String) throws {
            let page = try fs.lookup(parent: comic, name: name).get().id
            let done = DispatchSemaphore(value: 0)
            fs.read(page, offset: 0, size: 1 << 20, descriptor: nil, caller: .thisProcess) { _ in done.signal() }
            done.wait()
        }
        try read("003.jpg")
        // The prefetch of 004…008 has come back once they are in the cache beside 003: had it
        // counted as reading, the reads would be recorded by now (the links below flush them).
        XCTAssertTrue(waitUntil(20) { fs.core.pages.cache.count == 6 }, "prefetched 004…008")
        XCTAssertEqual(fs.core.continueReadingLinks().map(\.name), [], "one page read is no reading yet")
        XCTAssertNil(state.progress().first)
        try read("006.jpg")
        let links = fs.core.continueReadingLinks()
        let row = try XCTUnwrap(state.progress().first)
        XCTAssertEqual(row.pagesSeen, [2, 5], "prefetched pages are not read pages")
        XCTAssertEqual(row.lastPage, 5)
        XCTAssertEqual(links.map(\.name), ["01 - Moon Tales 01"])
        XCTAssertEqual(fs.core.linkTarget(links[0].comic), "../Moon Tales/Moon Tales 01")
    }
}

import Foundation
import InkyCore
import InkyLibrary
import InkyStore
import InkyTestSupport
import InkyWorker
import XCTest

/// The library core's facade for front ends, by itself: paths that name nothing, progress
/// recorded without a page read (what a sync protocol reports).
final class LibraryReaderTests: XCTestCase {
    func testPathsOutsideWhatFoldersShowNameNothingAndProgressRecordsLikeARead() throws {
        let pool = WorkerPool(WorkerPool.Configuration(executable: CommandRunner.workerBinary.path, maxWorkers: 1, timeout: 20))
        defer { pool.shutdown() }
        let state = StateDatabase.open(at: ArchiveMaker.temporaryDirectory("reader-state", removedAtExit: true).appendingPathComponent("state.sqlite").path)
        let reader = LibraryReader(library: LibraryFilesystem(library: Corpus.fixtures.path, options: MountOptions(), backend: pool, state: state))
        for path in ["", ".", "..", "../Library/Moon Tales/Moon Tales 01.cb7", "Moon Tales/../Moon Tales/Moon Tales 01.cb7", "/etc/passwd",
                     "Moon Tales//Moon Tales 01.cb7", "Moon Tales/Moon Tales 01.cb7/", "Moon Tales", "Space Patrol/cover.jpg", "Nothing.cbz"] {
            XCTAssertNil(reader.comic(at: path), path)
        }
        XCTAssertEqual(reader.comic(at: "Loose Sketches"), .library("Loose Sketches"), "a folder of loose images is a comic")
        XCTAssertEqual(reader.comic(at: "Moon Tales/Moon Tales 01.cb7"), .library("Moon Tales/Moon Tales 01.cb7"))
        XCTAssertEqual(reader.folder("..").map(\.count), .failure(.ENOENT))
        XCTAssertEqual(reader.folder("Loose Sketches").map(\.count), .failure(.ENOENT), "a comic, not a folder")

        let comic = try XCTUnwrap(reader.comic(at: "Moon Tales/Moon Tales 01.cb7"))
        XCTAssertEqual(reader.recordReading(comic, page: 10).map { "recorded" }, .failure(.ERANGE))
        XCTAssertEqual(reader.recordReading(.vault("0123"), page: 0).map { "recorded" }, .failure(.ENOENT))
        XCTAssertEqual(reader.recordReading(comic, page: 6).map { "recorded" }, .success("recorded"))
        let reading = reader.inProgress()
        XCTAssertEqual(reading.map(\.comic), [comic])
        XCTAssertEqual(reading.first?.progress.lastPage, 6)
        XCTAssertEqual(reading.first?.progress.pageCount, 10)
    }
}

import Foundation
import InkyArchive
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyWorker

/// Stored pages are read in the daemon without a worker, and a listing that lies about where
/// they are can only earn an error.
final class StoredPageReaderTests: XCTestCase {
    private var dir: URL!
    private var archive: URL!
    private let members = (1...4).map { ("p\($0).jpg", ArchiveMaker.noise(count: 5_000 * $0 + 3, seed: UInt64($0))) }

    override func setUpWithError() throws {
        dir = ArchiveMaker.temporaryDirectory("stored-reader")
        archive = dir.appendingPathComponent("c.cbz")
        try ArchiveMaker.zip(at: archive, members: members)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func testStoredPagesNeedNoWorker() throws {
        let reader = try ComicOpener.open(archive.path)
        let identity = try FileIdentity.of(archive.path).get()
        XCTAssertTrue(reader.listing.pages.allSatisfy { $0.storedData != nil })
        // No worker can start: every page must come from the file.
        let workers = WorkerPool(.init(executable: "/nonexistent/inkyfs", maxWorkers: 1, timeout: 5))
        defer { workers.shutdown() }
        var got: [PageSource: [UInt8]] = [:]
        let requests = reader.listing.pages.map(EntryRequest.init)
        try workers.read(archive.path, identity: identity, entries: requests, limits: .default) { index, result in
            got[index] = try? result.get()
        }
        for page in reader.listing.pages { XCTAssertEqual(got[page.source], members[page.number].1, page.name) }
        // Without the stored range the same request needs a worker, and there is none.
        let decoded = requests.map { EntryRequest(source: $0.source, size: $0.size, name: $0.name) }
        XCTAssertThrowsError(try workers.read(archive.path, identity: identity, entries: decoded, limits: .default) { _, _ in }) {
            // The comic's error names the comic (its ERROR.txt and index entry are the comic's), and the worker that would not start.
            XCTAssertEqual($0 as? ComicError, .parserFailed(path: archive.path, detail: "cannot start a worker (/nonexistent/inkyfs): No such file or directory"))
        }
    }

    func testLyingRangesChangedFilesAndBadChecksumsAreErrors() throws {
        let reader = try ComicOpener.open(archive.path)
        let identity = try FileIdentity.of(archive.path).get()
        let page = reader.listing.pages[1]
        let stored = try XCTUnwrap(page.storedData)
        let entry = EntryRequest(source: page.source, size: page.size, name: page.sourcePath, stored: stored)
        let files = StoredPageReader()
        XCTAssertEqual(try files.read(archive.path, identity: identity, entry: entry, stored: stored, limits: .default).get(), members[1].1)

        func failure(_ stored: StoredData, size: Int64? = nil, identity claimed: FileIdentity? = nil) -> ComicError? {
            var lying = entry
            lying.size = size ?? entry.size
            if case .failure(let error) = files.read(archive.path, identity: claimed ?? identity,
                                                       entry: lying, stored: stored, limits: .default) { return error }
            return nil
        }
        let fileSize = identity.size
        for (lie, size) in [(StoredData(offset: -1, crc32: stored.crc32), nil), (StoredData(offset: fileSize, crc32: stored.crc32), nil),
                            (StoredData(offset: fileSize - 10, crc32: stored.crc32), nil),
                            (StoredData(offset: Int64.max - 2, crc32: stored.crc32), nil),
                            (stored, Int64(-5)), (stored, Int64.max), (stored, ComicLimits.default.maxPageBytes + 1)] as [(StoredData, Int64?)] {
            guard case .corrupted(_, let detail)? = failure(lie, size: size) else { return XCTFail("\(lie) \(String(describing: size))") }
            XCTAssertTrue(detail.contains("not inside the archive"), detail)
        }
        // Inside the file but not the page's bytes (the page before, shifted): the CRC says no.
        guard case .corrupted(_, let detail)? = failure(StoredData(offset: stored.offset - 1, crc32: stored.crc32)) else { return XCTFail() }
        XCTAssertTrue(detail.contains("CRC-32"), detail)
        guard case .corrupted? = failure(StoredData(offset: stored.offset, crc32: stored.crc32 ^ 1)) else { return XCTFail() }

        var stale = identity
        stale.modifiedNanoseconds += 1
        guard case .io(_, ESTALE, _)? = failure(stored, identity: stale) else { return XCTFail("a changed file is stale") }
        // Replaced by another file (the old one stays open here): the path's file is checked.
        let other = dir.appendingPathComponent("other.cbz")
        try ArchiveMaker.zip(at: other, members: members.reversed())
        XCTAssertEqual(rename(other.path, archive.path), 0)
        guard case .io(_, ESTALE, _)? = failure(stored, identity: identity) else { return XCTFail("a replaced file is stale") }
        try FileManager.default.removeItem(at: archive)
        guard case .io(_, ENOENT, _)? = failure(stored, identity: identity) else { return XCTFail("a deleted file is gone") }
    }
}

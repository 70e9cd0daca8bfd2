import Foundation
import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// Reading one page touches that page only; solid streams go forward without restarting.
final class StreamingCostTests: XCTestCase {
    func testLastPageOfA300PageStoredCBZReadsOnlyThatPage() throws {
        let dir = ArchiveMaker.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let archive = dir.appendingPathComponent("big.cbz")
        let pageSize = 20_000
        try ArchiveMaker.zip(at: archive, members: (1...300).map { ("page\($0).jpg", ArchiveMaker.noise(count: pageSize, seed: UInt64($0))) })
        let fileSize = try FileManager.default.attributesOfItem(atPath: archive.path)[.size] as! Int

        let reader = try ComicOpener.open(archive.path)
        let afterListing = reader.stats.sourceBytesRead
        // libarchive's seekable ZIP reader visits every local header; small first reads after
        // each seek keep that to a few KiB an entry instead of a whole read-ahead block.
        XCTAssertLessThan(afterListing, Int64(fileSize / 4), "listing must read headers, not pages")
        let last = try XCTUnwrap(reader.listing.pages.last)
        XCTAssertEqual(last.sourcePath, "page300.jpg")
        XCTAssertEqual(try reader.readPage(last), ArchiveMaker.noise(count: pageSize, seed: 300))
        let forPage = reader.stats.sourceBytesRead - afterListing
        // The central directory again plus one page and a read-ahead block, never 299 other pages.
        XCTAssertLessThan(forPage, afterListing + Int64(pageSize) + 3 * 65_536, "read \(forPage) of \(fileSize) bytes")
        XCTAssertEqual(reader.stats.pageBytesProduced, Int64(pageSize))
    }

    func testSolidStreamGoesForwardAndRestartsOnlyToGoBack() throws {
        let reader = try ComicOpener.open(Corpus.fixture("Moon Tales/Moon Tales 01.cb7"))
        XCTAssertTrue(reader.listing.isSolid)
        // 7z stores moon_p10 before moon_p2: stream order is not reading order.
        let pages = reader.listing.pages.sorted { $0.entryIndex < $1.entryIndex }
        XCTAssertNotEqual(pages, reader.listing.pages)
        XCTAssertEqual(reader.cost(of: pages[0]), .direct)
        for page in pages { _ = try reader.readPage(page) }
        XCTAssertEqual(reader.stats.restarts, 0, "reading in stream order never restarts the decoder")
        if case .restart = reader.cost(of: pages[2]) {} else { XCTFail("going back must be announced as a restart") }
        _ = try reader.readPage(pages[2])
        XCTAssertEqual(reader.stats.restarts, 1)
        XCTAssertEqual(reader.cost(of: pages[3]), .direct, "the next page after a read is cheap")
        if case .forward(let skipped) = reader.cost(of: pages[6]) { XCTAssertEqual(skipped, pages[6].entryIndex - pages[3].entryIndex) }
        else { XCTFail("a jump forward skips entries") }
    }

    func testRandomAccessFormatsNeverAnnounceRestarts() throws {
        let reader = try ComicOpener.open(Corpus.fixture("Space Patrol/Space Patrol 001.cbz"))
        XCTAssertFalse(reader.listing.isSolid)
        _ = try reader.readPage(reader.listing.pages[8])
        XCTAssertEqual(reader.cost(of: reader.listing.pages[1]), .direct)
    }

    func testComicInfoIsReadWhileListingSoIndexingOpensTheArchiveOnce() throws {
        let reader = try ComicOpener.open(Corpus.fixture("Space Patrol/Space Patrol 001.cbz"))
        let afterListing = reader.stats.sourceBytesRead
        let xml = String(decoding: try XCTUnwrap(reader.readComicInfo()), as: UTF8.self)
        XCTAssertTrue(xml.contains("<ComicInfo"), xml)
        XCTAssertEqual(reader.stats.sourceBytesRead, afterListing, "the metadata came with the listing, not from a second open")
    }

    func testADamagedComicInfoCostsOnlyItselfNotTheListing() throws {
        let dir = ArchiveMaker.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let archive = dir.appendingPathComponent("damaged.cbz")
        let info = Array("<?xml version=\"1.0\"?><ComicInfo><Series>MARKER</Series></ComicInfo>".utf8)
        try ArchiveMaker.zip(at: archive, members: [("ComicInfo.xml", info), ("001.jpg", ArchiveMaker.noise(count: 5_000, seed: 1)),
                                                    ("002.jpg", ArchiveMaker.noise(count: 5_000, seed: 2))])
        // Stored: the member's bytes are in the file as they are; one flipped byte fails its CRC.
        var bytes = try Data(contentsOf: archive)
        let at = try XCTUnwrap(bytes.range(of: Data("MARKER".utf8))).lowerBound
        bytes[at] ^= 0x20
        try bytes.write(to: archive)
        let reader = try ComicOpener.open(archive.path)
        XCTAssertEqual(reader.listing.pages.map(\.sourcePath), ["001.jpg", "002.jpg"])
        XCTAssertEqual(try reader.readPage(reader.listing.pages[1]), ArchiveMaker.noise(count: 5_000, seed: 2))
        XCTAssertThrowsError(try reader.readComicInfo(), "a ComicInfo.xml failing its CRC is not served") { error in
            guard case ComicError.corrupted(let path, let detail) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, archive.path)
            XCTAssertTrue(detail.contains("CRC"), detail)
        }
    }
}

import XCTest
@testable import InkyCore

/// The index's binary listings: every field round-trips, and damaged bytes are refused, never
/// trusted or crashed on.
final class ListingCodecTests: XCTestCase {
    private let listing = ComicListing(
        format: .pdf,
        pages: [Page(number: 0, name: "001.jpg", sourcePath: "Kapitel 1/été.jpg", entryIndex: 3, size: 123_456,
                     storedData: StoredData(offset: 1 << 33, crc32: 0xDEAD_BEEF)),
                Page(number: 1, name: "002.png", sourcePath: "page 2 rendered.png", entryIndex: 1, size: Page.sizeAfterRendering)],
        comicInfo: ArchiveEntry(index: 9, path: "ComicInfo.xml", kind: .file, declaredSize: 512),
        skipped: [SkippedEntry(path: "__MACOSX/x", reason: .hidden), SkippedEntry(path: "l", reason: .notARegularFile(.symlink)),
                  SkippedEntry(path: "../x", reason: .unsafeName("a .. component")), SkippedEntry(path: "big.png", reason: .tooLarge(1 << 40)),
                  SkippedEntry(path: "a", reason: .notAnImage), SkippedEntry(path: "b", reason: .encrypted),
                  SkippedEntry(path: "c", reason: .unknownSize), SkippedEntry(path: "d", reason: .emptyFile),
                  SkippedEntry(path: "(header at byte 512)", reason: .damagedHeader("Damaged tar archive"))],
        isSolid: true, rendering: PageRendering(height: 2_700, dpi: 150))

    func testEveryFieldRoundTrips() {
        XCTAssertEqual(ListingCodec.decode(ListingCodec.encode(listing)), listing)
        var plain = listing
        plain.comicInfo = nil
        plain.rendering = nil
        plain.format = .sevenZip
        XCTAssertEqual(ListingCodec.decode(ListingCodec.encode(plain)), plain)
        var converted = listing
        converted.rendering?.conversion = PageConversion(format: .jpeg, fitWidth: 1_264, fitHeight: 1_680, grayscale: true)
        XCTAssertEqual(ListingCodec.decode(ListingCodec.encode(converted)), converted)
        converted.rendering?.conversion = PageConversion(format: .jpeg)
        XCTAssertEqual(ListingCodec.decode(ListingCodec.encode(converted)), converted)
    }

    func testVersionOneListingsInTheIndexStillRead() {
        // Version 1 wrote no conversion settings and no learned CRC-32s.
        var old = listing
        for index in old.pages.indices { old.pages[index].learnedCRC32 = nil }
        let bytes = ListingCodec.encode(old, version: 1)
        XCTAssertEqual(bytes[0], 1)
        XCTAssertLessThan(bytes.count, ListingCodec.encode(old).count)
        XCTAssertEqual(ListingCodec.decode(bytes), old)
        // A version 2 listing (conversion or CRCs, by development builds) is made again.
        var two = ListingCodec.encode(old)
        two[0] = 2
        XCTAssertNil(ListingCodec.decode(two))
    }

    func testItIsSmallerThanJSON() throws {
        let json = try JSONEncoder().encode(listing)
        XCTAssertLessThan(ListingCodec.encode(listing).count * 2, json.count)
    }

    func testTruncatedOrDamagedBytesAreRefused() {
        let bytes = ListingCodec.encode(listing)
        for length in 0..<bytes.count { XCTAssertNil(ListingCodec.decode(Array(bytes[0..<length])), "cut at \(length)") }
        XCTAssertNil(ListingCodec.decode(bytes + [0]), "trailing bytes")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var damaged = bytes
            damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            _ = ListingCodec.decode(damaged) // never traps: nil, or some other well-formed listing
        }
        XCTAssertNil(ListingCodec.decode([1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]), "a huge length")
    }
}

import XCTest
@testable import InkyCore

/// A cut page's piece in the index: version 5 stores it as its own field; version 4 listings,
/// which packed it into the entry index (member × 65,536 + slot), still decode into the same
/// typed pages, so an index written before need not be made again.
final class ListingCodecPiecesTests: XCTestCase {
    private let profile = PageConversion(format: .jpeg, fitWidth: 1_264, fitHeight: 1_680, splitSpreads: true, rightToLeft: true,
                                         strips: true)

    /// What the version 4 fixture holds: a whole page, a spread read right to left, a strip in four.
    private var cutListing: ComicListing {
        var pages = [Page(number: 0, name: "001.jpg", sourcePath: "a/001.jpg", entryIndex: 0, size: 4_321)]
        pages[0].learnedCRC32 = 0xCAFE_F00D
        for part in 0..<2 {
            pages.append(Page(number: pages.count, name: "002-\(part + 1).jpg", sourcePath: "a/002.webp", entryIndex: 1,
                              piece: PagePiece(cut: .spread, part: part, count: 2, rightToLeft: true), size: Page.sizeAfterRendering))
        }
        for part in 0..<4 {
            pages.append(Page(number: pages.count, name: "003-\(part + 1).png", sourcePath: "a/003.png", entryIndex: 300,
                              piece: PagePiece(cut: .strip, part: part, count: 4), size: Page.sizeAfterRendering))
        }
        return ComicListing(format: .zip, pages: pages, comicInfo: nil, skipped: [], isSolid: false,
                            rendering: PageRendering(conversion: profile))
    }

    /// `cutListing` as version 4's encoder wrote it (printed by that encoder, at b11a5a4): entry
    /// indexes 0, 82176, 82177 (1 × 65,536 + right to left, count 2, parts 0 and 1) and 19694080…83
    /// (300 × 65,536 + strip, count 4, parts 0 to 3).
    static let versionFourCut: [UInt8] = [
        0x04, 0x03, 0x7A, 0x69, 0x70, 0x00, 0x01, 0x8C, 0x15, 0x01, 0x01, 0xE0, 0x13, 0xA0, 0x1A, 0x00, 0x0B, 0x00, 0x00, 0x07,
        0x07, 0x30, 0x30, 0x31, 0x2E, 0x6A, 0x70, 0x67, 0x09, 0x61, 0x2F, 0x30, 0x30, 0x31, 0x2E, 0x6A, 0x70, 0x67, 0x00, 0xC2,
        0x43, 0x00, 0x01, 0x8D, 0xE0, 0xFB, 0xD7, 0x0C, 0x09, 0x30, 0x30, 0x32, 0x2D, 0x31, 0x2E, 0x6A, 0x70, 0x67, 0x0A, 0x61,
        0x2F, 0x30, 0x30, 0x32, 0x2E, 0x77, 0x65, 0x62, 0x70, 0x80, 0x82, 0x05, 0x01, 0x00, 0x00, 0x09, 0x30, 0x30, 0x32, 0x2D,
        0x32, 0x2E, 0x6A, 0x70, 0x67, 0x0A, 0x61, 0x2F, 0x30, 0x30, 0x32, 0x2E, 0x77, 0x65, 0x62, 0x70, 0x81, 0x82, 0x05, 0x01,
        0x00, 0x00, 0x09, 0x30, 0x30, 0x33, 0x2D, 0x31, 0x2E, 0x70, 0x6E, 0x67, 0x09, 0x61, 0x2F, 0x30, 0x30, 0x33, 0x2E, 0x70,
        0x6E, 0x67, 0x80, 0x84, 0xB2, 0x09, 0x01, 0x00, 0x00, 0x09, 0x30, 0x30, 0x33, 0x2D, 0x32, 0x2E, 0x70, 0x6E, 0x67, 0x09,
        0x61, 0x2F, 0x30, 0x30, 0x33, 0x2E, 0x70, 0x6E, 0x67, 0x81, 0x84, 0xB2, 0x09, 0x01, 0x00, 0x00, 0x09, 0x30, 0x30, 0x33,
        0x2D, 0x33, 0x2E, 0x70, 0x6E, 0x67, 0x09, 0x61, 0x2F, 0x30, 0x30, 0x33, 0x2E, 0x70, 0x6E, 0x67, 0x82, 0x84, 0xB2, 0x09,
        0x01, 0x00, 0x00, 0x09, 0x30, 0x30, 0x33, 0x2D, 0x34, 0x2E, 0x70, 0x6E, 0x67, 0x09, 0x61, 0x2F, 0x30, 0x30, 0x33, 0x2E,
        0x70, 0x6E, 0x67, 0x83, 0x84, 0xB2, 0x09, 0x01, 0x00, 0x00,
    ]

    /// A version 4 listing whose profile cuts nothing (`--fit --grayscale --crop-margins`, solid),
    /// by the same encoder: its entry indexes 70000 and 5 are plain indexes, never unpacked.
    static let versionFourUncut: [UInt8] = [
        0x04, 0x03, 0x7A, 0x69, 0x70, 0x01, 0x01, 0x8C, 0x15, 0x01, 0x01, 0xE0, 0x13, 0xA0, 0x1A, 0x01, 0x04, 0x00, 0x00, 0x02,
        0x07, 0x30, 0x30, 0x31, 0x2E, 0x6A, 0x70, 0x67, 0x08, 0x30, 0x30, 0x31, 0x2E, 0x77, 0x65, 0x62, 0x70, 0xF0, 0xA2, 0x04,
        0x01, 0x00, 0x00, 0x07, 0x30, 0x30, 0x32, 0x2E, 0x6A, 0x70, 0x67, 0x07, 0x30, 0x30, 0x32, 0x2E, 0x6A, 0x70, 0x67, 0x05,
        0x9A, 0x01, 0x00, 0x00,
    ]

    func testPiecesRoundTripAsTheirOwnField() throws {
        let listing = cutListing
        let bytes = ListingCodec.encode(listing)
        XCTAssertEqual(bytes[0], 5)
        XCTAssertEqual(ListingCodec.decode(bytes), listing)
        XCTAssertEqual(try XCTUnwrap(ListingCodec.decode(bytes)).pages.map(\.entryIndex), [0, 1, 1, 300, 300, 300, 300])
        // Only a profile that cuts pages lists pieces: one in any other listing is refused.
        var uncut = listing
        uncut.rendering?.conversion = PageConversion(format: .jpeg, fitWidth: 1_264, fitHeight: 1_680)
        XCTAssertNil(ListingCodec.decode(ListingCodec.encode(uncut)))
        uncut.rendering = nil
        XCTAssertNil(ListingCodec.decode(ListingCodec.encode(uncut)))
    }

    func testVersionFourListingsDecodeIntoTypedPieces() throws {
        // The tests' version 4 writer (for an index made by an older inkyfs) writes what that encoder did.
        XCTAssertEqual(ListingCodec.encode(cutListing, version: 4), Self.versionFourCut)
        let decoded = try XCTUnwrap(ListingCodec.decode(Self.versionFourCut))
        XCTAssertEqual(decoded, cutListing)
        XCTAssertEqual(decoded.pages.map(\.name), ["001.jpg", "002-1.jpg", "002-2.jpg", "003-1.png", "003-2.png", "003-3.png", "003-4.png"])
        XCTAssertEqual(decoded.pages.map(\.source), decoded.pages.map(\.source).sorted(), "reading order is stream order here")
        // Stored again, it is written as version 5 and reads back the same.
        XCTAssertEqual(ListingCodec.decode(ListingCodec.encode(decoded)), decoded)

        let uncut = try XCTUnwrap(ListingCodec.decode(Self.versionFourUncut))
        XCTAssertEqual(uncut.pages.map(\.entryIndex), [70_000, 5])
        XCTAssertEqual(uncut.pages.map(\.piece), [nil, nil])
        XCTAssertEqual(uncut.rendering?.conversion, PageConversion(format: .jpeg, fitWidth: 1_264, fitHeight: 1_680, grayscale: true,
                                                                   cropMargins: true))
    }

    func testPiecesNoListingMakesAreRefused() throws {
        // Version 4: the last strip's packed index 19694083 (part 3 of 4) made part 4 of 4.
        var packed = Self.versionFourCut
        let last = try XCTUnwrap(packed.indices.last { packed[$0...].starts(with: [0x83, 0x84, 0xB2, 0x09]) })
        packed[last] = 0x84
        XCTAssertNil(ListingCodec.decode(packed))
        // Version 5: a page's piece is its last bytes: flags, count, part.
        var one = cutListing
        one.pages = [one.pages[3]]
        one.pages[0].number = 0
        let good = ListingCodec.encode(one)
        XCTAssertEqual(ListingCodec.decode(good), one)
        let end = good.count
        for (offset, byte, what) in [(3, UInt8(4), "an unknown flag"), (2, UInt8(PagePiece.maxCount + 1), "too many pieces"),
                                     (2, UInt8(1), "one piece"), (1, UInt8(4), "a part past the count")] {
            var bad = good
            bad[end - offset] = byte
            XCTAssertNil(ListingCodec.decode(bad), what)
        }
        var future = good
        future[0] = ListingCodec.version + 1
        XCTAssertNil(ListingCodec.decode(future), "a version not known yet")
    }
}

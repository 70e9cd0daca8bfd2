@testable import InkyCore
import XCTest

final class PagePieceTests: XCTestCase {
    private let profile = PageConversion(fitWidth: 1_264, fitHeight: 1_680, splitSpreads: true, strips: true)

    func testASpreadIsTwoHalvesInReadingOrder() {
        let ltr = PagePiece.pieces(width: 3_000, height: 2_000, conversion: profile, rightToLeft: false)
        XCTAssertEqual(ltr.map(\.position), [0, 1], "left half first")
        let rtl = PagePiece.pieces(width: 3_000, height: 2_000, conversion: profile, rightToLeft: true)
        XCTAssertEqual(rtl.map(\.position), [1, 0], "right half first")
        XCTAssertEqual(PagePiece.pieces(width: 2_000, height: 2_000, conversion: profile, rightToLeft: false), [], "square stays whole")
        XCTAssertEqual(PagePiece.pieces(width: 3_000, height: 2_000, conversion: PageConversion(fitWidth: 100, fitHeight: 100), rightToLeft: false), [])
        XCTAssertEqual(PagePiece.pieces(width: 0, height: 2_000, conversion: profile, rightToLeft: false), [])
    }

    func testStripsAreCountedAtTheFitBoxsWidth() {
        // 800 wide is not enlarged: 9100 rows are ceil(9100 / 1680) = 6 strips.
        XCTAssertEqual(PagePiece.pieces(width: 800, height: 9_100, conversion: profile, rightToLeft: true).count, 6)
        // 2528 wide shrinks by half: 6000 rows become 3000, under two boxes: one page.
        XCTAssertEqual(PagePiece.pieces(width: 2_528, height: 6_000, conversion: profile, rightToLeft: false), [])
        XCTAssertEqual(PagePiece.pieces(width: 800, height: 3_360, conversion: profile, rightToLeft: false), [], "exactly two boxes")
        XCTAssertEqual(PagePiece.pieces(width: 800, height: 3_361, conversion: profile, rightToLeft: false).count, 3)
        XCTAssertEqual(PagePiece.pieces(width: 100, height: 10_000_000, conversion: profile, rightToLeft: false).count, PagePiece.maxCount)
    }

    func testEntryIndexesKeepStreamOrderAndComeBack() {
        let pieces = PagePiece.pieces(width: 800, height: 9_100, conversion: profile, rightToLeft: false)
            + PagePiece.pieces(width: 3_000, height: 2_000, conversion: profile, rightToLeft: true)
        for piece in pieces {
            let index = PagePiece.entryIndex(of: 41, piece)
            XCTAssertTrue(index > PagePiece.entryIndex(of: 41, nil) && index < PagePiece.entryIndex(of: 42, nil))
            XCTAssertEqual(PagePiece.decode(index)?.entry, 41)
            XCTAssertEqual(PagePiece.decode(index)?.piece, piece)
        }
        XCTAssertNil(PagePiece.decode(PagePiece.entryIndex(of: 41, nil))?.piece)
        XCTAssertNil(PagePiece.decode(41 * PagePiece.slots + (3 << 7 | 3)), "a part past its count")
        XCTAssertNil(PagePiece.decode(-1))
    }

    func testNamesSortInReadingOrder() {
        let strips = (0..<12).map { PagePiece(cut: .strip, part: $0, count: 12).name(for: "007.jpg") }
        XCTAssertEqual(strips.first, "007-01.jpg")
        XCTAssertEqual(strips + ["008.jpg"], (strips + ["008.jpg", "006.jpg"]).sorted().dropFirst().map { $0 })
        XCTAssertEqual(PagePiece(cut: .spread, part: 1, count: 2).name(for: "007"), "007-2")
    }

    func testTheIndexKeepsTheProfileSoAListingMadeWithOtherSettingsIsNotReused() {
        let listing = ComicListing(format: .zip, pages: [], comicInfo: nil, skipped: [], isSolid: false,
                                   rendering: PageRendering(conversion: profile))
        let decoded = ListingCodec.decode(ListingCodec.encode(listing))
        XCTAssertEqual(decoded, listing)
        XCTAssertFalse(decoded?.fits(PageRendering(conversion: PageConversion(fitWidth: 1_264, fitHeight: 1_680))) ?? true)
        var flipped = ListingCodec.encode(listing)
        XCTAssertEqual(flipped[0], 4)
        var plain = listing
        plain.rendering?.conversion = PageConversion(fitWidth: 1_264, fitHeight: 1_680)
        let other = ListingCodec.encode(plain)
        let flags = flipped.indices.first { flipped[$0] != other[$0] } ?? 0
        flipped[flags] = 0x80
        XCTAssertNil(ListingCodec.decode(flipped), "an unknown profile bit is refused")
    }
}

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

    func testSourcesSortInStreamOrderWithAnEntrysPiecesTogether() {
        let strips = PagePiece.pieces(width: 800, height: 9_100, conversion: profile, rightToLeft: false)
        let halves = PagePiece.pieces(width: 3_000, height: 2_000, conversion: profile, rightToLeft: true)
        XCTAssertEqual(strips.count, 6)
        // Stream order: the entry first, then its pieces in reading order (a whole entry first).
        let inOrder = [PageSource(entry: 2)] + halves.map { PageSource(entry: 3, piece: $0) } + [PageSource(entry: 40)]
            + strips.map { PageSource(entry: 41, piece: $0) } + [PageSource(entry: 42), PageSource(entry: 70_000)]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 { XCTAssertEqual(inOrder.shuffled(using: &generator).sorted(), inOrder) }
        XCTAssertLessThan(PageSource(entry: 41), PageSource(entry: 41, piece: strips[0]))
        XCTAssertNotEqual(PageSource(entry: 41), PageSource(entry: 41, piece: strips[0]), "a piece is not its whole entry")
        XCTAssertEqual(Set(inOrder).count, inOrder.count)
    }

    func testAPieceNoListingMakesIsRefusedFromJSON() throws {
        let piece = PagePiece(cut: .spread, part: 1, count: 2, rightToLeft: true)
        XCTAssertEqual(try JSONDecoder().decode(PagePiece.self, from: JSONEncoder().encode(piece)), piece)
        for (part, count) in [(0, 1), (2, 2), (-1, 2), (0, PagePiece.maxCount + 1), (0, 0)] {
            let bad = PagePiece(cut: .strip, part: part, count: count)
            XCTAssertFalse(bad.isWellFormed)
            XCTAssertThrowsError(try JSONDecoder().decode(PagePiece.self, from: JSONEncoder().encode(bad)), "\(part) of \(count)") { error in
                guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(part) of \(count): \(error)") }
                XCTAssertEqual(context.debugDescription, "piece \(part) of \(count) is no piece a listing makes")
            }
        }
        XCTAssertTrue(PagePiece(cut: .strip, part: PagePiece.maxCount - 1, count: PagePiece.maxCount).isWellFormed)
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
        XCTAssertEqual(flipped[0], ListingCodec.version)
        var plain = listing
        plain.rendering?.conversion = PageConversion(fitWidth: 1_264, fitHeight: 1_680)
        let other = ListingCodec.encode(plain)
        let flags = flipped.indices.first { flipped[$0] != other[$0] } ?? 0
        flipped[flags] = 0x80
        XCTAssertNil(ListingCodec.decode(flipped), "an unknown profile bit is refused")
    }
}

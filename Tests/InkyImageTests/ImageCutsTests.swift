@testable import InkyImage
import InkyTestSupport
import XCTest

/// Crop, halves and strips in libvips, checked on the pixels they keep.
final class ImageCutsTests: XCTestCase {
    func testPiecesOfASpreadTogetherAreTheWholeWidth() throws {
        let spread = try ProfileImages.spread(width: 1_001, height: 600)
        let halves = try (0..<2).map { position in
            try ImageConverter.convert(spread, ImageConversion(piece: ImagePiece(vertical: false, position: position, count: 2))).size
        }
        XCTAssertEqual(halves, [ImageSize(width: 500, height: 600), ImageSize(width: 501, height: 600)])
    }

    func testCropKeepsThePictureInsideItsBorderAndAJPEGXLIsCutNotPassedThrough() throws {
        let bordered = try ProfileImages.bordered(width: 300, height: 200, border: 40)
        XCTAssertEqual(try ImageConverter.convert(bordered, ImageConversion(cropMargins: true)).size, ImageSize(width: 300, height: 200))
        let jxl = try PageImages.make(.jxlFromJPEG, width: 300, height: 200)
        let half = try ImageConverter.convert(jxl, ImageConversion(piece: ImagePiece(vertical: false, position: 1, count: 2)))
        XCTAssertEqual(half.size, ImageSize(width: 150, height: 200))
    }

    func testTheNearestBlankRowWinsAndAboveOnATie() {
        // Four rows of three pixels: noisy, blank, noisy, blank.
        let rows: [UInt8] = [0, 200, 90, 250, 255, 251, 10, 240, 30, 7, 7, 7]
        XCTAssertEqual(ImageCuts.nearestBlank(rows, width: 3, around: 2), 1)
        XCTAssertEqual(ImageCuts.nearestBlank(rows, width: 3, around: 3), 3)
        XCTAssertEqual(ImageCuts.nearestBlank(rows, width: 3, around: 0), 1)
        XCTAssertNil(ImageCuts.nearestBlank([0, 200, 90], width: 3, around: 0))
        XCTAssertNil(ImageCuts.nearestBlank([], width: 0, around: 0))
    }
}

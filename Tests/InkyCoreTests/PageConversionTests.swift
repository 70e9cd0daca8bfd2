import InkyCore
import XCTest

/// Which pages a conversion touches and what they are called, decided from names alone; and
/// which indexed listings still serve under it.
final class PageConversionTests: XCTestCase {
    func testJPEGModeRenamesOnlyPagesInOtherFormats() {
        let jpeg = PageConversion(format: .jpeg)
        XCTAssertNil(jpeg.convertedExtension(of: "001.jpg"))
        XCTAssertNil(jpeg.convertedExtension(of: "002.JPEG"))
        XCTAssertNil(jpeg.convertedExtension(of: "003.png"))
        XCTAssertEqual(jpeg.convertedExtension(of: "004.webp"), "jpg")
        XCTAssertEqual(jpeg.convertedExtension(of: "005.jxl"), "jpg")
        XCTAssertEqual(jpeg.convertedExtension(of: "006.gif"), "png")
        XCTAssertNil(PageConversion.none.convertedExtension(of: "007.webp"))
        XCTAssertEqual(PageConversion.renamed("007.webp", to: "jpg"), "007.jpg")
        XCTAssertEqual(PageConversion.renamed("0007", to: "jpg"), "0007.jpg")
    }

    func testADeviceProfileConvertsEveryPage() {
        let device = PageConversion(format: .original, fitWidth: 1_264, fitHeight: 1_680, grayscale: false)
        XCTAssertEqual(device.convertedExtension(of: "001.jpg"), "jpg")
        XCTAssertEqual(device.convertedExtension(of: "002.png"), "png")
        XCTAssertEqual(PageConversion(grayscale: true).convertedExtension(of: "003.avif"), "jpg")
    }

    func testAnIndexedListingServesOnlyUnderTheSettingsItWasMadeWith() {
        let plain = ComicListing(format: .zip, pages: [], comicInfo: nil, skipped: [], isSolid: false)
        let jpeg = PageRendering(conversion: PageConversion(format: .jpeg))
        XCTAssertTrue(plain.fits(.default))
        XCTAssertFalse(plain.fits(jpeg), "a listing of unconverted names under --pages jpeg")
        var converted = plain
        converted.rendering = jpeg
        XCTAssertTrue(converted.fits(jpeg))
        XCTAssertFalse(converted.fits(.default), "converted names and sizes without --pages")
        XCTAssertFalse(converted.fits(PageRendering(conversion: PageConversion(format: .jpeg, grayscale: true))))
    }
}

import InkyImage
import InkyTestSupport
import XCTest

/// Every format comics carry, from real encoders, through libvips (and libjxl).
final class ImageConverterTests: XCTestCase {
    func testEveryFormatBecomesJPEGOrPNGWithItsDimensions() throws {
        for format in PageImages.Format.allCases {
            let source = try PageImages.make(format, width: 240, height: 360)
            let converted = try ImageConverter.convert(source, ImageConversion())
            let seen = try PageImages.inspect(converted.bytes)
            XCTAssertEqual(seen.format, converted.format == .jpeg ? "JPEG" : "PNG", "\(format)")
            XCTAssertEqual([seen.width, seen.height], [240, 360], "\(format)")
            XCTAssertEqual(converted.size, ImageSize(width: 240, height: 360), "\(format)")
        }
    }

    func testGIFAndTransparencyStayPNGAndPhotosBecomeJPEG() throws {
        XCTAssertEqual(try ImageConverter.convert(PageImages.make(.gif, width: 64, height: 64), ImageConversion()).format, .png)
        XCTAssertEqual(try ImageConverter.convert(PageImages.make(.webp, width: 64, height: 64, alpha: true), ImageConversion()).format, .png)
        XCTAssertEqual(try ImageConverter.convert(PageImages.make(.webp, width: 64, height: 64), ImageConversion()).format, .jpeg)
        XCTAssertEqual(try ImageConverter.convert(PageImages.make(.tiff, width: 64, height: 64), ImageConversion()).format, .jpeg)
    }

    func testJPEGXLMadeFromAJPEGGivesThatJPEGBackBitExact() throws {
        let jxl = try PageImages.make(.jxlFromJPEG, width: 300, height: 200)
        let jpeg = try PageImages.sourceJPEG(width: 300, height: 200)
        let converted = try ImageConverter.convert(jxl, ImageConversion())
        XCTAssertEqual(converted.format, .jpeg)
        XCTAssertEqual(converted.bytes, jpeg)
        XCTAssertNotEqual(try ImageConverter.convert(PageImages.make(.jxlLossless, width: 300, height: 200), ImageConversion()).bytes, jpeg)
    }

    func testFitShrinksIntoTheBoxKeepingShapeAndNeverEnlarges() throws {
        let fit = ImageConversion(fit: ImageSize(width: 1264, height: 1680), grayscale: true)
        let tall = try ImageConverter.convert(PageImages.make(.jpeg, width: 1800, height: 2700), fit)
        XCTAssertEqual(tall.size, ImageSize(width: 1120, height: 1680))
        let seen = try PageImages.inspect(tall.bytes)
        XCTAssertEqual([seen.width, seen.height], [1120, 1680])
        XCTAssertTrue(seen.isGray, "\(seen)")
        let small = try ImageConverter.convert(PageImages.make(.webp, width: 300, height: 200), fit)
        XCTAssertEqual(small.size, ImageSize(width: 300, height: 200))
        XCTAssertTrue(try PageImages.inspect(small.bytes).isGray)
        // A JPEG XL from a JPEG that must shrink is decoded, not reconstructed.
        let shrunk = try ImageConverter.convert(PageImages.make(.jxlFromJPEG, width: 1800, height: 2700), fit)
        XCTAssertEqual(shrunk.size, ImageSize(width: 1120, height: 1680))
    }

    /// A grayscale JPEG page is decoded to its luma alone (libjpeg's scaled IDCT): what comes out
    /// must be what the colour path gives, turned upright, and a damaged page refused as there.
    func testGrayscaleJPEGPagesComeOutAsTheColourPathWouldGiveThem() throws {
        let fit = ImageConversion(fit: ImageSize(width: 1264, height: 1680), grayscale: true)
        let turned = try PageImages.jpeg(width: 1800, height: 1200, orientation: 6)
        XCTAssertEqual(try ImageConverter.convert(turned, fit).size, ImageSize(width: 1120, height: 1680), "EXIF orientation 6 is obeyed")
        let tall = try ImageConverter.convert(PageImages.make(.jpeg, width: 1800, height: 2700), fit)
        let seen = try PageImages.inspect(tall.bytes)
        XCTAssertEqual([seen.width, seen.height], [1120, 1680])
        XCTAssertTrue(seen.isGray)
        XCTAssertEqual(try ImageConverter.convert(PageImages.make(.jpeg, width: 600, height: 900), ImageConversion(grayscale: true)).size,
                       ImageSize(width: 600, height: 900), "no box: gray at its own size")
        var truncated = try PageImages.make(.jpeg, width: 1800, height: 2700)
        truncated.removeLast(truncated.count / 2)
        XCTAssertThrowsError(try ImageConverter.convert(truncated, fit), "a truncated page is refused, so served as it is") { error in
            // Found in the encode (libvips decodes as it encodes), but the page's fault, in libvips' words.
            XCTAssertEqual(error as? ImageError, .undecodable("VipsJpeg: Premature end of input file"))
        }
    }

    func testADecompressionBombIsRefusedOnItsHeader() throws {
        let bomb = try PageImages.bombPNG()
        XCTAssertEqual(try ImageConverter.header(of: bomb).size, ImageSize(width: 100_000, height: 100_000))
        XCTAssertThrowsError(try ImageConverter.convert(bomb, ImageConversion())) { error in
            XCTAssertEqual(error as? ImageError, .tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000))
        }
    }

    func testBytesThatAreNoImageGiveLibvipsReason() throws {
        XCTAssertThrowsError(try ImageConverter.convert(Array("not an image\n".utf8), ImageConversion())) { error in
            guard case .undecodable(let detail)? = error as? ImageError else { return XCTFail("\(error)") }
            XCTAssertFalse(detail.isEmpty)
        }
        var truncated = try PageImages.make(.png, width: 200, height: 200)
        truncated.removeLast(truncated.count / 2)
        XCTAssertThrowsError(try ImageConverter.convert(truncated, ImageConversion())) { error in
            guard case .undecodable(let detail)? = error as? ImageError else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains("libpng read error"), detail)
        }
        XCTAssertThrowsError(try ImageConverter.convert([], ImageConversion())) { error in
            XCTAssertEqual(error as? ImageError, .undecodable("no bytes"))
        }
    }

    func testProgressIsReportedWhileLibvipsWorks() throws {
        let page = try PageImages.make(.tiff, width: 1_800, height: 2_700)
        var ticks = 0
        let converted = try ImageConverter.convert(page, ImageConversion(fit: ImageSize(width: 1_264, height: 1_680))) { ticks += 1 }
        XCTAssertEqual(converted.size, ImageSize(width: 1_120, height: 1_680))
        XCTAssertGreaterThan(ticks, 0, "a worker's heartbeat runs during a long conversion")
    }
}

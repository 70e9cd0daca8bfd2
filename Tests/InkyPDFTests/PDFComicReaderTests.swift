import Foundation
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyPDF

/// The PDF backend on its own: which pages pass their image through, which are rendered, and
/// what a locked or broken PDF gives.
final class PDFComicReaderTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws { folder = ArchiveMaker.temporaryDirectory("pdf") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    func testImagePagesAreTheEmbeddedImagesByteForByte() throws {
        let images = try PDFMaker.pageImages(in: folder, kinds: ["jpeg-rgb", "png-rgb", "jpeg-gray", "png-gray"])
        let pdf = folder.appendingPathComponent("Issue 7.pdf")
        try PDFMaker.imagePDF(at: pdf, images: images)

        let reader = try PDFComicReader(path: pdf.path, limits: .default)
        XCTAssertEqual(reader.listing.format, .pdf)
        XCTAssertEqual(reader.listing.pages.map(\.name), ["001.jpg", "002.png", "003.jpg", "004.png"])
        XCTAssertNil(reader.listing.rendering, "no page of an image PDF is rendered")
        for (page, image) in zip(reader.listing.pages, images) {
            let original = try [UInt8](Data(contentsOf: image))
            XCTAssertEqual(page.size, Int64(original.count), "\(page.name): size known from the listing")
            XCTAssertEqual(Digest.sha256Hex(try reader.readPage(page)), Digest.sha256Hex(original), page.name)
        }
    }

    func testVectorPagesAreRenderedAtTheConfiguredHeight() throws {
        let pdf = folder.appendingPathComponent("vector.pdf")
        try PDFMaker.vectorPDF(at: pdf, pages: 2, width: 477, height: 738)
        let reader = try PDFComicReader(path: pdf.path, limits: .default)
        XCTAssertEqual(reader.listing.pages.map(\.name), ["001.png", "002.png"])
        XCTAssertEqual(reader.listing.pages.map(\.isSizeKnown), [false, false], "rendered pages have no size before they are rendered")
        XCTAssertEqual(reader.listing.rendering, .default)

        let page = folder.appendingPathComponent("page.png")
        try Data(try reader.readPage(reader.listing.pages[1])).write(to: page)
        let size = try PDFMaker.decodedSize(of: page.path)
        XCTAssertEqual(size.height, 2_700)
        XCTAssertEqual(Double(size.width), 477.0 * 2_700 / 738, accuracy: 1.5)

        var byDPI = ComicLimits.default
        byDPI.rendering = PageRendering(dpi: 100)
        let dpiReader = try PDFComicReader(path: pdf.path, limits: byDPI)
        try Data(try dpiReader.readPage(dpiReader.listing.pages[0])).write(to: page)
        let small = try PDFMaker.decodedSize(of: page.path)
        XCTAssertEqual(Double(small.width), 477.0 * 100 / 72, accuracy: 1.5)
        XCTAssertEqual(Double(small.height), 738.0 * 100 / 72, accuracy: 1.5)
    }

    func testARenderedPageMustKeepTheSizeItWasFirstRenderedAt() throws {
        let pdf = folder.appendingPathComponent("vector.pdf")
        try PDFMaker.vectorPDF(at: pdf, pages: 1)
        let reader = try PDFComicReader(path: pdf.path, limits: .default)
        var page = reader.listing.pages[0]
        let first = try reader.readPage(page)
        page.size = Int64(first.count)
        XCTAssertEqual(try reader.readPage(page), first, "rendering is deterministic")
        page.size += 1
        XCTAssertThrowsError(try reader.readPage(page)) { error in
            guard case .corrupted = error as? ComicError else { return XCTFail("\(error)") }
        }
    }

    func testMixedPDFPassesImagesThroughAndRendersTheRest() throws {
        let images = try PDFMaker.pageImages(in: folder, kinds: ["jpeg-rgb", "png-rgb"])
        let imagePDF = folder.appendingPathComponent("images.pdf"), vectorPDF = folder.appendingPathComponent("vector.pdf")
        try PDFMaker.imagePDF(at: imagePDF, images: images)
        try PDFMaker.vectorPDF(at: vectorPDF, pages: 1)
        let mixed = folder.appendingPathComponent("mixed.pdf")
        try PDFMaker.concatenate([imagePDF, vectorPDF], into: mixed)
        let reader = try PDFComicReader(path: mixed.path, limits: .default)
        XCTAssertEqual(reader.listing.pages.map(\.sourcePath), ["page 1 image.jpg", "page 2 image.png", "page 3 rendered.png"])
        XCTAssertEqual(try reader.readPage(reader.listing.pages[1]), try [UInt8](Data(contentsOf: images[1])))
    }

    func testAnImageThatDoesNotShowAsItIsIsRendered() throws {
        let images = try PDFMaker.pageImages(in: folder, kinds: ["jpeg-rgb"])
        let turned = folder.appendingPathComponent("turned.pdf"), framed = folder.appendingPathComponent("framed.pdf")
        try PDFMaker.imagePDF(at: turned, images: images, rotation: 90)
        try PDFMaker.imagePDF(at: framed, images: images, margin: 30)
        for pdf in [turned, framed] {
            let reader = try PDFComicReader(path: pdf.path, limits: .default)
            XCTAssertEqual(reader.listing.pages.map(\.sourcePath), ["page 1 rendered.png"], pdf.lastPathComponent)
        }
        let page = folder.appendingPathComponent("turned.png")
        let reader = try PDFComicReader(path: turned.path, limits: .default)
        try Data(try reader.readPage(reader.listing.pages[0])).write(to: page)
        let size = try PDFMaker.decodedSize(of: page.path)
        XCTAssertGreaterThan(size.width, size.height, "a portrait scan turned 90 degrees renders landscape")
    }

    func testAPasswordProtectedPDFIsEncrypted() throws {
        let plain = folder.appendingPathComponent("plain.pdf"), locked = folder.appendingPathComponent("locked.pdf")
        try PDFMaker.vectorPDF(at: plain, pages: 1)
        try PDFMaker.encrypt(plain, into: locked)
        XCTAssertThrowsError(try PDFComicReader(path: locked.path, limits: .default)) { error in
            XCTAssertEqual(error as? ComicError, .encrypted(path: locked.path))
        }
    }

    func testABrokenPDFIsCorruptedAndALimitHolds() throws {
        let broken = folder.appendingPathComponent("broken.pdf")
        try Data("%PDF-1.7\nthis is not a PDF body at all\n".utf8).write(to: broken)
        XCTAssertThrowsError(try PDFComicReader(path: broken.path, limits: .default)) { error in
            guard case .corrupted = error as? ComicError else { return XCTFail("\(error)") }
        }
        let pdf = folder.appendingPathComponent("vector.pdf")
        try PDFMaker.vectorPDF(at: pdf, pages: 3)
        let truncated = folder.appendingPathComponent("truncated.pdf")
        try Data(try Data(contentsOf: pdf).prefix(2_000)).write(to: truncated)
        XCTAssertThrowsError(try PDFComicReader(path: truncated.path, limits: .default)) { error in
            guard case .corrupted = error as? ComicError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try PDFComicReader(path: pdf.path, limits: ComicLimits(maxPages: 2))) { error in
            guard case .limitExceeded = error as? ComicError else { return XCTFail("\(error)") }
        }
    }

    func testTheComicboxCorpusPDFsAreFourTextPages() throws {
        // MANIFEST: status pdf_only, "PDF (text)" and "4-page PDF (text)": pages with PDF support.
        try Corpus.skipUnlessPresent("real-comics/comicbox")
        for name in ["test_pdf.pdf", "test_pdf_legacy_keywords.pdf"] {
            let reader = try PDFComicReader(path: Corpus.path("real-comics/comicbox/\(name)"), limits: .default)
            XCTAssertEqual(reader.listing.pages.map(\.name), ["001.png", "002.png", "003.png", "004.png"], name)
            let page = folder.appendingPathComponent("\(name).png")
            try Data(try reader.readPage(reader.listing.pages[0])).write(to: page)
            XCTAssertEqual(try PDFMaker.decodedSize(of: page.path).height, 2_700, name)
        }
    }

    func testPNGFileCRCIsPNGs() {
        var crc = CRC32()
        crc.update(Array("IEND".utf8))
        XCTAssertEqual(crc.value, 0xAE42_6082, "the CRC every PNG's IEND chunk carries")
        XCTAssertEqual(PNGFile.wrap(idat: [1, 2, 3], width: 1, height: 1, bitDepth: 8, colors: 3)?.count,
                       Int(PNGFile.size(idatLength: 3)))
    }
}

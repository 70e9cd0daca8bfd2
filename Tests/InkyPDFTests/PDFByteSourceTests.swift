import Foundation
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyPDF

/// A PDF read through bytes that are no file (what a vault object decrypted chunk by chunk is):
/// the same comic as from its file, and a read that fails (a chunk not authentic) fails what
/// needed it. MuPDF takes a failed read for the end of the data and carries on, so without the
/// reader's own record of the failure a damaged image would be served cut short, or rendered
/// half drawn, as if it were the page.
final class PDFByteSourceTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws { folder = ArchiveMaker.temporaryDirectory("pdf-bytes") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    /// Bytes in memory, whose reads in `failing` throw as a chunk that fails authentication does.
    final class MemoryBytes: RandomAccessBytes {
        let data: [UInt8]
        var failing: Range<Int64>?
        private(set) var reads = 0
        private(set) var largestRead = 0
        static let notAuthentic = ComicError.corrupted(path: "vault object", detail: "a chunk is not authentic")
        init(_ data: [UInt8]) { self.data = data }
        var size: Int64 { Int64(data.count) }
        func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
            reads += 1
            largestRead = max(largestRead, count)
            let end = min(size, offset + Int64(count))
            guard offset < end else { return 0 }
            if let failing, failing.overlaps(offset..<end) {
                throw MemoryBytes.notAuthentic
            }
            data.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: Int(end - offset)) }
            return Int(end - offset)
        }
    }

    /// Where `needle` starts in `haystack`.
    private func offset(of needle: [UInt8], in haystack: [UInt8]) throws -> Int64 {
        let found = try XCTUnwrap(Data(haystack).range(of: Data(needle)), "the image is embedded unchanged")
        return Int64(found.lowerBound)
    }

    func testAPDFReadThroughBytesIsTheComicItsFileIs() throws {
        let images = try PDFMaker.pageImages(in: folder, kinds: ["jpeg-rgb", "png-rgb", "png-gray", "jpeg-gray"])
        let imagePDF = folder.appendingPathComponent("images.pdf"), vectorPDF = folder.appendingPathComponent("vector.pdf")
        try PDFMaker.imagePDF(at: imagePDF, images: images)
        try PDFMaker.vectorPDF(at: vectorPDF, pages: 2)
        let pdf = folder.appendingPathComponent("Mixed.pdf")
        try PDFMaker.concatenate([imagePDF, vectorPDF], into: pdf)

        let fromFile = try PDFComicReader(path: pdf.path, limits: .default)
        let bytes = MemoryBytes(try readFile(pdf.path))
        let fromBytes = try PDFComicReader(bytes: bytes, label: "vault comic", limits: .default)
        XCTAssertEqual(fromBytes.path, "vault comic")
        XCTAssertEqual(fromBytes.listing, fromFile.listing)
        XCTAssertEqual(fromBytes.listing.pages.map(\.name), ["001.jpg", "002.png", "003.png", "004.jpg", "005.png", "006.png"])
        for (page, image) in zip(fromBytes.listing.pages, images) {
            XCTAssertEqual(try fromBytes.readPage(page), try readFile(image.path), "\(page.name): the embedded image")
        }
        for page in fromBytes.listing.pages.suffix(2) {
            XCTAssertEqual(try fromBytes.readPage(page), try fromFile.readPage(page), "\(page.name): the same render")
        }
        XCTAssertGreaterThan(bytes.reads, 0)
        XCTAssertLessThanOrEqual(bytes.largestRead, 65_536, "MuPDF reads at random, a block at a time, never the whole document")
    }

    func testAFailedReadFailsTheImageThatNeededItAndThePagesAfterStillRead() throws {
        let images = try PDFMaker.pageImages(in: folder, kinds: ["jpeg-rgb", "jpeg-rgb", "jpeg-rgb"], width: 900, height: 1_350)
        let pdf = folder.appendingPathComponent("Scans.pdf")
        try PDFMaker.imagePDF(at: pdf, images: images)
        let bytes = MemoryBytes(try readFile(pdf.path))
        let reader = try PDFComicReader(bytes: bytes, label: "vault comic", limits: .default)
        let second = try readFile(images[1].path)
        let start = try offset(of: second, in: bytes.data)
        bytes.failing = start + 40_000 ..< start + 40_001

        XCTAssertThrowsError(try reader.readPage(reader.listing.pages[1])) { error in
            // The source's own error, not MuPDF's "came out as fewer bytes" on a stream cut short.
            XCTAssertEqual(error as? ComicError, MemoryBytes.notAuthentic)
        }
        XCTAssertEqual(try reader.readPage(reader.listing.pages[2]), try readFile(images[2].path), "a page after the damage reads")
        XCTAssertEqual(try reader.readPage(reader.listing.pages[0]), try readFile(images[0].path), "and one before it")
        bytes.failing = nil
        XCTAssertEqual(try reader.readPage(reader.listing.pages[1]), second, "the damaged page itself, once its bytes read again")
    }

    func testARenderedPageWhoseImageCannotBeReadFailsTheListingInsteadOfRenderingHalfOfIt() throws {
        // A margin makes the pages renders. Listing them loads each image's encoded stream (the
        // render decodes it from there later): a damaged one would be drawn half grey.
        let images = try PDFMaker.pageImages(in: folder, kinds: ["jpeg-rgb", "jpeg-rgb"], width: 900, height: 1_350)
        let pdf = folder.appendingPathComponent("Margins.pdf")
        try PDFMaker.imagePDF(at: pdf, images: images, margin: 20)
        let bytes = MemoryBytes(try readFile(pdf.path))
        let whole = try PDFComicReader(bytes: bytes, label: "vault comic", limits: .default)
        XCTAssertEqual(whole.listing.pages.map(\.isSizeKnown), [false, false], "rendered pages")
        let start = try offset(of: try readFile(images[1].path), in: bytes.data)
        bytes.failing = start + 60_000 ..< start + 60_001
        XCTAssertThrowsError(try PDFComicReader(bytes: bytes, label: "vault comic", limits: .default)) { error in
            XCTAssertEqual(error as? ComicError, MemoryBytes.notAuthentic)
        }
        bytes.failing = nil
        let again = try PDFComicReader(bytes: bytes, label: "vault comic", limits: .default)
        XCTAssertEqual(try again.readPage(again.listing.pages[1]), try whole.readPage(whole.listing.pages[1]))
    }

    func testAListingThatCannotReadTheCrossReferenceTableFailsInsteadOfBeingRepaired() throws {
        let images = try PDFMaker.pageImages(in: folder, kinds: ["jpeg-rgb", "png-gray"])
        let pdf = folder.appendingPathComponent("Two.pdf")
        try PDFMaker.imagePDF(at: pdf, images: images)
        let bytes = MemoryBytes(try readFile(pdf.path))
        // The table and trailer at the end: MuPDF would rebuild them by scanning the objects.
        bytes.failing = bytes.size - 200 ..< bytes.size
        XCTAssertThrowsError(try PDFComicReader(bytes: bytes, label: "vault comic", limits: .default)) { error in
            XCTAssertEqual(error as? ComicError, MemoryBytes.notAuthentic)
        }
        bytes.failing = nil
        XCTAssertEqual(try PDFComicReader(bytes: bytes, label: "vault comic", limits: .default).listing.pages.count, 2)
    }
}

import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// `inkyfs pages` and `inkyfs scan` on PDF comics.
final class PDFCommandTests: XCTestCase {
    func testPagesAndScanShowPDFComics() throws {
        let folder = ArchiveMaker.temporaryDirectory("pdf-cli")
        defer { try? FileManager.default.removeItem(at: folder) }
        let images = try PDFMaker.pageImages(in: folder, kinds: ["jpeg-rgb", "png-rgb"])
        let library = folder.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try PDFMaker.imagePDF(at: library.appendingPathComponent("Scans.pdf"), images: images)
        try PDFMaker.vectorPDF(at: library.appendingPathComponent("Drawn.pdf"), pages: 3)

        let pages = try CommandRunner.inkyfs(["pages", library.appendingPathComponent("Scans.pdf").path])
        XCTAssertEqual(pages.status, 0, pages.stderr)
        let jpegSize = try FileManager.default.attributesOfItem(atPath: images[0].path)[.size] as? Int
        XCTAssertEqual(pages.stdout.split(separator: "\n").first.map(String.init),
                       "001.jpg  \(String(jpegSize ?? 0).leftPad(10))  page 1 image.jpg")

        let drawn = try CommandRunner.inkyfs(["pages", "--json", library.appendingPathComponent("Drawn.pdf").path])
        let summary = try JSONDecoder().decode(ComicSummary.self, from: Data(drawn.stdout.utf8))
        XCTAssertEqual(summary.format, .pdf)
        XCTAssertEqual(summary.pages?.map(\.size), [Page.sizeAfterRendering, Page.sizeAfterRendering, Page.sizeAfterRendering])

        let scan = try CommandRunner.inkyfs(["scan", library.path])
        XCTAssertEqual(scan.status, 0, scan.stderr)
        let lines = scan.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first { $0.contains("Drawn.pdf") }, "ok     PDF         Drawn.pdf: 3 pages")
        XCTAssertEqual(lines.first { $0.contains("Scans.pdf") }, "ok     PDF         Scans.pdf: 2 pages")
    }
}

private extension String {
    func leftPad(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}

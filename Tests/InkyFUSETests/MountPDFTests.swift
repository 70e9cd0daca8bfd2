import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// PDF comics through a real mount: directories of page images, the embedded images byte for
/// byte, rendered pages with exact sizes before any read, and locked or broken PDFs as ERROR.txt.
final class MountPDFTests: XCTestCase {
    private var library: URL!
    private var scratch: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("pdf-lib")
        scratch = ArchiveMaker.temporaryDirectory("pdf-scratch")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: scratch)
    }

    func testImagePDFPagesAreTheOriginalImageFiles() throws {
        let images = try PDFMaker.pageImages(in: scratch, kinds: ["jpeg-rgb", "png-rgb", "png-gray", "jpeg-gray", "jpeg-rgb"])
        try PDFMaker.imagePDF(at: library.appendingPathComponent("Issue 7.pdf"), images: images)
        let mount = try MountedLibrary(library: library)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("")).sorted(), ["Continue Reading", "Issue 7"])
        let names = try FileManager.default.contentsOfDirectory(atPath: mount.path("Issue 7")).sorted()
        XCTAssertEqual(names, ["001.jpg", "002.png", "003.png", "004.jpg", "005.jpg"])
        for (name, image) in zip(names, images) {
            let original = try readFile(image.path)
            XCTAssertEqual(statSize(mount.path("Issue 7/\(name)")), Int64(original.count), "\(name): exact size before the read")
            XCTAssertEqual(Digest.sha256Hex(try readFile(mount.path("Issue 7/\(name)"))), Digest.sha256Hex(original), name)
        }
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testRenderedPagesAreSizedAtFirstLookupAndTheIndexKeepsTheSize() throws {
        try PDFMaker.vectorPDF(at: library.appendingPathComponent("Vector.pdf"), pages: 6)
        let state = scratch.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let noRendering = ["INKYFS_TEST_WORKER_FAULT": "crash-read:Vector"]

        // Listing renders nothing: any page read in this mount would kill the worker and turn
        // the comic into ERROR.txt.
        var mount = try MountedLibrary(library: library, arguments: ["--state", state.path, "--prefetch", "2"], environment: noRendering)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Vector")).sorted(),
                       ["001.png", "002.png", "003.png", "004.png", "005.png", "006.png"])
        // Again: a render during the first listing (readdirplus asks for attributes) would have
        // killed the worker and left only ERROR.txt.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Vector")).count, 6)
        let log = mount.wholeLogAfterUnmount()
        XCTAssertFalse(log.contains("cannot render"), log)

        mount = try MountedLibrary(library: library, arguments: ["--state", state.path, "--prefetch", "2"])
        let started = Date()
        let firstSize = try XCTUnwrap(statSize(mount.path("Vector/004.png")), "stat renders the page")
        print("first lookup of a rendered page: \(Int(Date().timeIntervalSince(started) * 1000)) ms")
        let bytes = try readFile(mount.path("Vector/004.png"))
        XCTAssertEqual(Int64(bytes.count), firstSize)
        let file = scratch.appendingPathComponent("004.png")
        try Data(bytes).write(to: file)
        XCTAssertEqual(try PDFMaker.decodedSize(of: file.path).height, 2_700)
        let nextSize = try XCTUnwrap(statSize(mount.path("Vector/005.png")), "rendered ahead with page 4")
        // Unmounted at once, while page 6 may still be rendering: the sizes already learned are kept.
        XCTAssertEqual(mount.unmount(), 0)
        let stored = try IndexedListings.read(state.appendingPathComponent("state.sqlite").path)
        let sizes = try XCTUnwrap(ListingCodec.decode(stored), "a binary listing in the index: \(stored)").pages.map(\.size)
        XCTAssertEqual(sizes[3], firstSize, "sizes kept in the index: \(sizes)")
        XCTAssertEqual(sizes[4], nextSize, "sizes kept in the index: \(sizes)")

        // A remount takes the sizes from the index: again no worker may render.
        mount = try MountedLibrary(library: library, arguments: ["--state", state.path], environment: noRendering)
        XCTAssertEqual(statSize(mount.path("Vector/004.png")), firstSize)
        XCTAssertEqual(statSize(mount.path("Vector/005.png")), nextSize)
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Vector/ERROR.txt")))
        XCTAssertEqual(mount.unmount(), 0)

        // Other rendering settings make other sizes: the stored ones are not trusted then.
        mount = try MountedLibrary(library: library, arguments: ["--state", state.path, "-o", "pdf_height=1000"])
        let small = try readFile(mount.path("Vector/004.png"))
        XCTAssertEqual(statSize(mount.path("Vector/004.png")), Int64(small.count))
        try Data(small).write(to: file)
        XCTAssertEqual(try PDFMaker.decodedSize(of: file.path).height, 1_000)
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testAScanWithMarginsIsRenderedEvenWhenItsPNGSpansManyFrames() throws {
        // Full-size noisy scans: their render does not compress below a worker frame (4 MiB).
        let images = try PDFMaker.pageImages(in: scratch, kinds: ["jpeg-rgb", "jpeg-rgb"], width: 1_600, height: 2_400)
        try PDFMaker.imagePDF(at: library.appendingPathComponent("Margins.pdf"), images: images, margin: 20)
        let mount = try MountedLibrary(library: library, arguments: ["--pdf-height", "2400"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Margins")).sorted(), ["001.png", "002.png"])
        let bytes = try readFile(mount.path("Margins/002.png"))
        XCTAssertGreaterThan(bytes.count, 4 << 20, "larger than one worker frame (the page crosses several)")
        XCTAssertEqual(statSize(mount.path("Margins/002.png")), Int64(bytes.count))
        let file = scratch.appendingPathComponent("002.png")
        try Data(bytes).write(to: file)
        XCTAssertEqual(try PDFMaker.decodedSize(of: file.path).height, 2_400)
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testLockedAndBrokenPDFsShowErrorText() throws {
        let plain = scratch.appendingPathComponent("plain.pdf")
        try PDFMaker.vectorPDF(at: plain, pages: 1)
        try PDFMaker.encrypt(plain, into: library.appendingPathComponent("Locked.pdf"))
        try Data("%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage".utf8).write(to: library.appendingPathComponent("Broken.pdf"))
        let mount = try MountedLibrary(library: library)
        for (comic, words) in [("Locked", "encrypted"), ("Broken", "corrupted")] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path(comic)), ["ERROR.txt"], comic)
            let text = String(decoding: try readFile(mount.path("\(comic)/ERROR.txt")), as: UTF8.self)
            XCTAssertTrue(text.contains(words), "\(comic): \(text)")
        }
        XCTAssertTrue(mount.isDaemonAlive)
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testTheComicboxCorpusPDFsAreFourRenderedPages() throws {
        let corpus = Corpus.path("real-comics/comicbox")
        try Corpus.skipUnlessPresent("real-comics/comicbox")
        for name in ["test_pdf.pdf", "test_pdf_legacy_keywords.pdf"] {
            try FileManager.default.copyItem(atPath: "\(corpus)/\(name)", toPath: library.appendingPathComponent(name).path)
        }
        let mount = try MountedLibrary(library: library)
        for comic in ["test_pdf", "test_pdf_legacy_keywords"] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path(comic)).sorted(),
                           ["001.png", "002.png", "003.png", "004.png"], comic)
            let output = try ArchiveMaker.run("/usr/bin/identify", ["-format", "%m %w %h", mount.path("\(comic)/004.png")])
            XCTAssertTrue(output.hasPrefix("PNG ") && output.hasSuffix(" 2700"), "\(comic): identify says \(output)")
        }
        XCTAssertEqual(mount.unmount(), 0)
    }
}

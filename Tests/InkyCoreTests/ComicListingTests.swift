import XCTest
@testable import InkyCore

final class ComicListingTests: XCTestCase {
    private func entry(_ index: Int, _ path: String, kind: EntryKind = .file, size: Int64? = 100, encrypted: Bool = false) -> ArchiveEntry {
        ArchiveEntry(index: index, path: path, kind: kind, declaredSize: size, isEncrypted: encrypted)
    }

    private func build(_ entries: [ArchiveEntry], limits: ComicLimits = .default) throws(ComicError) -> ComicListing {
        try ComicListing.build(path: "test.cbz", format: .zip, entries: entries, isSolid: false, limits: limits)
    }

    func testPagesAreImagesOnlyAndClutterIsSkipped() throws {
        let listing = try build([
            entry(0, "Comic/"), entry(1, "Comic/02.JPG"), entry(2, "Comic/01.png"),
            entry(3, "__MACOSX/Comic/._01.png"), entry(4, "Comic/.hidden.jpg"), entry(5, "Comic/_thumb.jpg"),
            entry(6, "ComicInfo.xml"), entry(7, "Comic/notes.txt"), entry(8, "Comic/link.jpg", kind: .symlink),
            entry(9, "Comic/dev.jpg", kind: .device), entry(10, "Comic/empty.jpg", size: 0),
            entry(11, "Comic/03.webp"), entry(12, "Comic/04.AVIF"), entry(13, "Comic/05.jxl"), entry(14, "Comic/06.heic"),
            entry(15, "Comic/07.tiff"), entry(16, "Comic/08.bmp"), entry(17, "Comic/09.gif"),
        ])
        XCTAssertEqual(listing.pages.map(\.sourcePath), ["Comic/01.png", "Comic/02.JPG", "Comic/03.webp", "Comic/04.AVIF",
                                                         "Comic/05.jxl", "Comic/06.heic", "Comic/07.tiff", "Comic/08.bmp", "Comic/09.gif"])
        XCTAssertEqual(listing.pages.map(\.name), ["001.png", "002.jpg", "003.webp", "004.avif", "005.jxl", "006.heic", "007.tiff", "008.bmp", "009.gif"])
        XCTAssertEqual(listing.comicInfo?.path, "ComicInfo.xml")
        XCTAssertEqual(listing.pages.map(\.entryIndex), [2, 1, 11, 12, 13, 14, 15, 16, 17])
        XCTAssertEqual(listing.skipped.count, 8)
    }

    func testPageNamesArePaddedToThePageCount() {
        XCTAssertEqual(PageNaming.name(number: 0, of: 5, sourcePath: "x/a.JPEG"), "001.jpeg")
        XCTAssertEqual(PageNaming.name(number: 41, of: 999, sourcePath: "a.png"), "042.png")
        XCTAssertEqual(PageNaming.name(number: 41, of: 1000, sourcePath: "a.png"), "0042.png")
        XCTAssertEqual(PageNaming.name(number: 9999, of: 10_000, sourcePath: "a.gif"), "10000.gif")
    }

    func testByteOrderOfNamesIsReadingOrder() throws {
        let entries = (0..<1200).map { entry($0, "p\($0 + 1).jpg") }.shuffled()
        let listing = try build(entries)
        XCTAssertEqual(listing.pages.map(\.name), listing.pages.map(\.name).sorted())
        XCTAssertEqual(listing.pages.first?.sourcePath, "p1.jpg")
        XCTAssertEqual(listing.pages.last?.sourcePath, "p1200.jpg")
    }

    func testUnsafeNamesAreRefused() throws {
        let long = String(repeating: "x", count: 1100) + ".jpg"
        let listing = try build([
            entry(0, "../evil.jpg"), entry(1, "/etc/abs.jpg"), entry(2, "a/../../b.jpg"), entry(3, "..\\win.jpg"),
            entry(4, "C:\\drive.jpg"), entry(5, long), entry(6, "ctl\u{1}.jpg"), entry(7, "ok.jpg"),
        ])
        XCTAssertEqual(listing.pages.map(\.sourcePath), ["ok.jpg"])
        XCTAssertEqual(listing.skipped.count, 7)
        XCTAssertTrue(listing.skipped.allSatisfy { if case .unsafeName = $0.reason { true } else { false } }, "\(listing.skipped)")
    }

    func testLimits() {
        let many = (0..<11).map { entry($0, "\($0).jpg") }
        XCTAssertThrowsError(try build(many, limits: ComicLimits(maxPages: 10))) { error in
            XCTAssertEqual(error as? ComicError, .limitExceeded(path: "test.cbz", detail: "11 pages, more than the limit of 10"))
        }
        let big = [entry(0, "1.jpg", size: 3 << 20), entry(1, "2.jpg", size: 3 << 20)]
        XCTAssertThrowsError(try build(big, limits: ComicLimits(maxComicBytes: 5 << 20))) { error in
            XCTAssertEqual(error as? ComicError, .limitExceeded(path: "test.cbz", detail: "pages total 6 MiB, more than the limit of 5 MiB"))
        }
        let listing = try? build([entry(0, "huge.jpg", size: 200 << 20), entry(1, "ok.jpg")])
        XCTAssertEqual(listing?.pages.map(\.sourcePath), ["ok.jpg"], "a page over 128 MiB is left out")
        XCTAssertEqual(listing?.skipped.first?.reason, .tooLarge(200 << 20))
    }

    func testAHundredThousandJunkMembersKeepTheListingSmall() throws {
        let listing = try build((0..<100_000).map { entry($0, "junk/\($0).txt") } + [entry(100_000, "page.jpg")])
        XCTAssertEqual(listing.pages.map(\.sourcePath), ["page.jpg"])
        XCTAssertEqual(listing.skipped.count, ComicListing.maxSkippedKept)
        XCTAssertLessThan(try JSONEncoder().encode(listing).count, 64 << 10, "far under the worker frame limit")
    }

    func testOnlyEncryptedImagesMeansEncrypted() {
        XCTAssertThrowsError(try build([entry(0, "1.jpg", encrypted: true), entry(1, "2.jpg", encrypted: true)])) { error in
            XCTAssertEqual(error as? ComicError, .encrypted(path: "test.cbz"))
        }
    }

    func testErrorsSayWhatHappenedInWords() {
        XCTAssertEqual(ComicError.encrypted(path: "a.cbz").message, "a.cbz: encrypted archives are not supported (password-protected entries)")
        XCTAssertTrue(ComicError.pageTooLarge(path: "a.cbz", entry: "x.jpg", limit: 128 << 20).message.contains("128 MiB"))
        XCTAssertEqual(ByteCountText.parse("256M"), 256 << 20)
        XCTAssertEqual(ByteCountText.parse("4GiB"), 4 << 30)
        XCTAssertNil(ByteCountText.parse("lots"))
    }
}

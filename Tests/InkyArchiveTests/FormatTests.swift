import Foundation
import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// Each format of the sample library opens, from its content, with pages in reading order.
final class FormatTests: XCTestCase {
    func testSampleLibraryComicsOpenInEveryFormat() throws {
        let expectations: [(String, ArchiveFormat, Int, String)] = [
            ("Space Patrol/Space Patrol 001.cbz", .zip, 12, "page01.jpg"),
            ("Space Patrol/Space Patrol 002.cbz", .zip, 10, "Chapter 1/01.jpg"),
            ("Moon Tales/Moon Tales 01.cb7", .sevenZip, 10, "moon_p1.jpg"),
            ("Moon Tales/Moon Tales 02.cbt", .tar, 6, "Moon Tales 02/01.jpg"),
            ("Loose Sketches", .folder, 4, "sketch-1.png"),
            ("Real/Captain Science 001.cbr", .rar5, 5, "Captain Science 001/CaptainScience#1_01.jpg"),
            ("Broken/Really A Zip.cbr", .zip, 3, ""),
        ]
        for (path, format, count, first) in expectations {
            let reader = try ComicOpener.open(Corpus.fixture(path))
            XCTAssertEqual(reader.listing.format, format, path)
            XCTAssertEqual(reader.listing.pages.count, count, path)
            if !first.isEmpty { XCTAssertEqual(reader.listing.pages.first?.sourcePath, first, path) }
            for page in reader.listing.pages {
                let bytes = try reader.readPage(page)
                XCTAssertEqual(Int64(bytes.count), page.size)
                XCTAssertTrue(Self.looksLikeImage(bytes), "\(path) \(page.sourcePath) is not a JPEG/PNG")
            }
        }
    }

    /// In the C locale every process starts in, libarchive gave no name for a non-ASCII entry,
    /// so accented pages silently vanished from ZIP, 7z and TAR comics.
    func testAccentedPageNamesArePagesInEveryFormat() throws {
        let dir = ArchiveMaker.temporaryDirectory("accents")
        defer { try? FileManager.default.removeItem(at: dir) }
        let names = ["Café 01.jpg", "Ñandú 02.jpg", "Ωμέγα 03.jpg", "漫画 04.jpg"]
        let pages = dir.appendingPathComponent("pages")
        try FileManager.default.createDirectory(at: pages, withIntermediateDirectories: true)
        for (index, name) in names.enumerated() {
            try Data([0xFF, 0xD8, 0xFF, 0xE0] + ArchiveMaker.noise(count: 2000, seed: UInt64(index + 1))).write(to: pages.appendingPathComponent(name))
        }
        try ArchiveMaker.run("/usr/bin/zip", ["-q", dir.appendingPathComponent("a.cbz").path] + names, in: pages)
        try ArchiveMaker.run("/usr/bin/7z", ["a", "-bd", "-bso0", dir.appendingPathComponent("a.cb7").path] + names, in: pages)
        try ArchiveMaker.run("/bin/tar", ["-cf", dir.appendingPathComponent("a.cbt").path, "--format=pax"] + names, in: pages)
        // Python's zipfile sets the UTF-8 flag (Info-ZIP does not), the case libarchive converts.
        try ArchiveMaker.zip(at: dir.appendingPathComponent("b.cbz"),
                             members: try names.map { ($0, [UInt8](try Data(contentsOf: pages.appendingPathComponent($0)))) })
        for archive in ["a.cbz", "b.cbz", "a.cb7", "a.cbt"] {
            let reader = try ComicOpener.open(dir.appendingPathComponent(archive).path)
            XCTAssertEqual(reader.listing.pages.map(\.sourcePath), names, archive)
            for page in reader.listing.pages {
                XCTAssertEqual(try reader.readPage(page), [UInt8](try Data(contentsOf: pages.appendingPathComponent(page.sourcePath))), archive)
            }
        }
    }

    func testChaptersAndJunkInsideAnArchive() throws {
        let reader = try ComicOpener.open(Corpus.fixture("Space Patrol/Space Patrol 002.cbz"))
        let paths = reader.listing.pages.map(\.sourcePath)
        XCTAssertEqual(paths.last, "Chapter 10/02.jpg")
        XCTAssertEqual(paths.firstIndex(of: "Chapter 2/01.jpg"), 5)
        XCTAssertFalse(paths.contains { $0.contains("MACOSX") || $0.hasSuffix(".txt") || $0.contains("Thumbs") })
        XCTAssertEqual(reader.listing.pages.map(\.name).first, "001.jpg")
        XCTAssertEqual(reader.listing.pages.map(\.name)[6], "007.png")
    }

    func testComicInfoIsMetadataNotAPage() throws {
        let reader = try ComicOpener.open(Corpus.fixture("Space Patrol/Space Patrol 001.cbz"))
        XCTAssertEqual(reader.listing.comicInfo?.path, "ComicInfo.xml")
        let xml = String(decoding: try XCTUnwrap(reader.readComicInfo()), as: UTF8.self)
        XCTAssertTrue(xml.contains("<ComicInfo"), xml)
    }

    func testTarVariantsOpenFromContent() throws {
        let dir = ArchiveMaker.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let pages = dir.appendingPathComponent("pages")
        try FileManager.default.createDirectory(at: pages, withIntermediateDirectories: true)
        for n in 1...3 { try Data(ArchiveMaker.noise(count: 5000, seed: UInt64(n))).write(to: pages.appendingPathComponent("p\(n).jpg")) }
        for (flag, format) in [("-z", ArchiveFormat.gzip), ("-j", .bzip2), ("-J", .xz), ("--zstd", .zstd)] {
            let archive = dir.appendingPathComponent("comic-\(format.rawValue).cbz") // wrong extension on purpose
            do {
                try ArchiveMaker.run("/usr/bin/tar", ["-c", flag, "-f", archive.path, "-C", pages.path, "p1.jpg", "p2.jpg", "p3.jpg"])
            } catch {
                continue // that compressor is not installed here; the others still count
            }
            let reader = try ComicOpener.open(archive.path)
            XCTAssertEqual(reader.listing.format, format)
            XCTAssertTrue(reader.listing.isSolid)
            XCTAssertEqual(try reader.readPage(reader.listing.pages[2]), ArchiveMaker.noise(count: 5000, seed: 3))
        }
    }

    static func looksLikeImage(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0xFF, 0xD8, 0xFF]) || bytes.starts(with: [0x89, 0x50, 0x4E, 0x47])
    }
}

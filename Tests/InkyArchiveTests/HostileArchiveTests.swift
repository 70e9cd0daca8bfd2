import Foundation
import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// Broken and hostile archives give typed errors and bounded work; good pages stay exact.
final class HostileArchiveTests: XCTestCase {
    private var dir: URL!

    override func setUp() { dir = ArchiveMaker.temporaryDirectory() }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func testTraversalAndAbsoluteNamesNeverBecomePages() throws {
        let archive = dir.appendingPathComponent("evil.cbz")
        let page = ArchiveMaker.noise(count: 3000, seed: 9)
        try ArchiveMaker.zip(at: archive, members: [
            ("../../escape.jpg", page), ("/etc/absolute.jpg", page), ("a/../../up.jpg", page),
            ("ok/01.jpg", page), ("..\\win.jpg", page),
        ])
        let reader = try ComicOpener.open(archive.path)
        XCTAssertEqual(reader.listing.pages.map(\.sourcePath), ["ok/01.jpg"])
        XCTAssertEqual(reader.listing.skipped.filter { if case .unsafeName = $0.reason { true } else { false } }.count, 4)
    }

    func testDecompressionBombIsRefusedWithBoundedOutput() throws {
        let archive = dir.appendingPathComponent("bomb.cbz")
        // 100 MiB of zeros deflate to ~100 KiB: a 1000:1 ratio, under the per-page size limit.
        try ArchiveMaker.python("""
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("01.jpg", b"\\xff\\xd8\\xff" + b"\\0" * (100 << 20))
                z.writestr("02.jpg", b"\\xff\\xd8\\xff real page")
            """, arguments: [archive.path])
        let reader = try ComicOpener.open(archive.path)
        XCTAssertEqual(reader.listing.pages.count, 2)
        var delivered = 0
        XCTAssertThrowsError(try reader.read(reader.listing.pages[0]) { delivered += $0.count }) { error in
            guard case ComicError.limitExceeded(_, let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains("100:1"), detail)
        }
        XCTAssertLessThan(delivered, 2 << 20, "stopped soon after the ratio check starts")
        XCTAssertEqual(try reader.readPage(reader.listing.pages[1]), [0xFF, 0xD8, 0xFF] + Array(" real page".utf8))
    }

    func testHeadersThatLieAboutSizeAreCaught() throws {
        // A local and central header declaring 10 bytes for a 300 KB page (the corpus's
        // size_exceeds_declared file, rebuilt here with an image name so it is a page).
        let archive = dir.appendingPathComponent("liar.cbz")
        try ArchiveMaker.python("""
            import struct, sys, zipfile
            data = bytes(range(256)) * 1200
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("01.jpg", data)
            raw = bytearray(open(sys.argv[1], "rb").read())
            local = raw.find(b"PK\\x03\\x04"); struct.pack_into("<I", raw, local + 22, 10)
            central = raw.find(b"PK\\x01\\x02"); struct.pack_into("<I", raw, central + 24, 10)
            open(sys.argv[1], "wb").write(raw)
            """, arguments: [archive.path])
        let reader = try ComicOpener.open(archive.path)
        XCTAssertEqual(reader.listing.pages.first?.size, 10)
        var delivered = 0
        XCTAssertThrowsError(try reader.read(reader.listing.pages[0]) { delivered += $0.count }) { error in
            guard case ComicError.corrupted = error else { return XCTFail("\(error)") }
        }
        XCTAssertLessThanOrEqual(delivered, 10, "never more than the declared size")
    }

    /// The corpus's own liars, read through the internal entry streamer (their entries are not images).
    func testTheCorpussLyingZipHeadersAreCaught() throws {
        for (file, entry, size) in [("libarchive-tests/test_read_format_zip_size_exceeds_declared_deflate.zip", 0, Int64(10)),
                                    ("libarchive-tests/test_read_format_zip_uncompressed_size_off_by_4gib.zip", 0, Int64(4_294_967_301))] {
            try Corpus.skipUnlessPresent(file)
            let path = Corpus.path(file)
            let liar = try LibArchiveComicReader(path: path, format: .zip, limits: .default)
            XCTAssertThrowsError(try liar.streamForTesting(entryIndex: entry, size: size), file) { error in
                guard case ComicError.corrupted(let named, _) = error else { return XCTFail("\(file): \(error)") }
                XCTAssertEqual(named, path)
            }
        }
    }

    func testTruncatedArchivesGiveTypedErrors() throws {
        let full = dir.appendingPathComponent("full.cbz")
        try ArchiveMaker.zip(at: full, members: (1...5).map { ("\($0).jpg", ArchiveMaker.noise(count: 30_000, seed: UInt64($0))) }, compression: "deflated")
        let bytes = try Data(contentsOf: full)
        for fraction in [0.1, 0.5, 0.9, 0.99] {
            let cut = dir.appendingPathComponent("cut-\(fraction).cbz")
            try bytes.prefix(Int(Double(bytes.count) * fraction)).write(to: cut)
            XCTAssertThrowsError(try Self.readAll(cut.path), "\(fraction)") { error in
                guard case ComicError.corrupted(let path, _) = error else { return XCTFail("\(fraction): \(error)") }
                XCTAssertEqual(path, cut.path)
            }
        }
        let truncated = Corpus.fixture("Broken/Truncated Issue.cbz")
        XCTAssertThrowsError(try ComicOpener.open(truncated)) { error in
            guard case ComicError.corrupted(let path, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, truncated)
        }
    }

    func testBitFlipsNeverServeWrongBytes() throws {
        let original = dir.appendingPathComponent("orig.cbz")
        let pages = (1...4).map { ArchiveMaker.noise(count: 20_000, seed: UInt64($0)) }
        for compression in ["stored", "deflated"] {
            try ArchiveMaker.zip(at: original, members: pages.enumerated().map { ("\($0.offset + 1).jpg", $0.element) }, compression: compression)
            let bytes = try Data(contentsOf: original)
            var errors = 0, clean = 0
            for offset in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 150)) {
                var flipped = bytes
                flipped[offset] ^= 0x5A
                let file = dir.appendingPathComponent("flip.cbz")
                try flipped.write(to: file)
                do throws(ComicError) {
                    let reader = try ComicOpener.open(file.path)
                    for page in reader.listing.pages {
                        do throws(ComicError) {
                            let data = try reader.readPage(page)
                            // A page that reads must be the page it claims to be.
                            if let index = Int(page.sourcePath.prefix { $0.isNumber }), (1...4).contains(index) {
                                XCTAssertEqual(data, pages[index - 1], "\(compression) flip at \(offset) served wrong bytes for \(page.sourcePath)")
                            }
                            clean += 1
                        } catch { errors += 1 }
                    }
                } catch { errors += 1 }
            }
            XCTAssertGreaterThan(errors, 0, compression)
            XCTAssertGreaterThan(clean, 0, compression)
        }
    }

    func testEncryptedComicsWithImagesSayEncrypted() throws {
        let pages = dir.appendingPathComponent("pages")
        try FileManager.default.createDirectory(at: pages, withIntermediateDirectories: true)
        for n in 1...3 { try Data(ArchiveMaker.noise(count: 4000, seed: UInt64(n))).write(to: pages.appendingPathComponent("0\(n).jpg")) }
        let zip = dir.appendingPathComponent("locked.cbz")
        try ArchiveMaker.run("/usr/bin/zip", ["-q", "-P", "secret", zip.path, "01.jpg", "02.jpg", "03.jpg"], in: pages)
        let sevenData = dir.appendingPathComponent("locked.cb7")
        try ArchiveMaker.run("/usr/bin/7z", ["a", "-bd", "-psecret", sevenData.path, "01.jpg", "02.jpg"], in: pages)
        let sevenHeaders = dir.appendingPathComponent("locked-headers.cb7")
        try ArchiveMaker.run("/usr/bin/7z", ["a", "-bd", "-psecret", "-mhe=on", sevenHeaders.path, "01.jpg"], in: pages)
        for archive in [zip, sevenData, sevenHeaders] {
            XCTAssertThrowsError(try Self.readAll(archive.path), archive.lastPathComponent) { error in
                guard case ComicError.encrypted = error else { return XCTFail("\(archive.lastPathComponent): \(error)") }
            }
        }
    }

    func testManyJunkEntriesAreBounded() throws {
        let archive = dir.appendingPathComponent("junk.cbz")
        try ArchiveMaker.python("""
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as z:
                for i in range(3000): z.writestr(f"junk/{i}.txt", b"x")
                z.writestr("01.jpg", b"\\xff\\xd8\\xff")
            """, arguments: [archive.path])
        XCTAssertThrowsError(try ComicOpener.open(archive.path, limits: ComicLimits(maxEntries: 1000))) { error in
            guard case ComicError.limitExceeded = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try ComicOpener.open(archive.path).listing.pages.count, 1)
    }

    private static func readAll(_ path: String) throws(ComicError) {
        let reader = try ComicOpener.open(path)
        for page in reader.listing.pages { _ = try reader.readPage(page) }
    }
}

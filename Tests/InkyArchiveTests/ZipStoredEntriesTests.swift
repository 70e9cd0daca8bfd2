import Foundation
import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// Which pages the listing says lie unchanged in the file, and where: exactly the stored,
/// unencrypted members, at the offset of their bytes.
final class ZipStoredEntriesTests: XCTestCase {
    func testStoredMembersAreFoundAtTheirBytesAndNothingElseIs() throws {
        let dir = ArchiveMaker.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let members = (1...6).map { ("pages/p\($0).jpg", ArchiveMaker.noise(count: 2_000 * $0, seed: UInt64($0))) }
        let stored = dir.appendingPathComponent("s.cbz"), deflated = dir.appendingPathComponent("d.cbz")
        let locked = dir.appendingPathComponent("e.cbz")
        let plain = dir.appendingPathComponent("plain")
        try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
        for (name, data) in members.prefix(2) { try Data(data).write(to: plain.appendingPathComponent((name as NSString).lastPathComponent)) }
        try ArchiveMaker.zip(at: stored, members: members)
        try ArchiveMaker.zip(at: deflated, members: members, compression: "deflated")
        try ArchiveMaker.run("/usr/bin/zip", ["-q", "-0", "-P", "secret", locked.path, "p1.jpg", "p2.jpg"], in: plain)
        let bytes = try Data(contentsOf: stored)
        let listing = try ComicOpener.open(stored.path).listing
        XCTAssertEqual(listing.pages.count, members.count)
        for page in listing.pages {
            let data = try XCTUnwrap(page.storedData, page.name)
            let original = members[page.number].1
            XCTAssertEqual(Array(bytes[Int(data.offset)..<Int(data.offset) + original.count]), original, page.name)
            XCTAssertEqual(data.crc32, CRC32.checksum(original), page.name)
        }
        XCTAssertTrue(try ComicOpener.open(deflated.path).listing.pages.allSatisfy { $0.storedData == nil })
        // An encrypted member is never read plainly, even were libarchive not to flag it.
        func located(_ archive: URL) throws -> [Int: StoredData] {
            let source = try FileSource(path: archive.path)
            let directory = ZipCentralDirectory(in: source, maxEntries: 100)
            let entries = directory.records.enumerated().map { index, record in
                ArchiveEntry(index: index, path: String(decoding: record.name, as: UTF8.self), kind: .file, declaredSize: record.size)
            }
            return ZipStoredEntries.locate(in: source, directory: directory, entries: entries)
        }
        XCTAssertEqual(try located(stored).count, members.count)
        XCTAssertEqual(ZipCentralDirectory(in: try FileSource(path: locked.path), maxEntries: 100).records.count, 2)
        XCTAssertEqual(try located(locked), [:])
        // From bytes that are not a file (a vault object's plaintext): the same offsets, into
        // those bytes.
        let fromBytes = try ComicOpener.open(bytes: NotAFile(try ArchiveFile(path: stored.path)), label: "object")
        XCTAssertEqual(fromBytes.listing.pages.map(\.storedData), listing.pages.map(\.storedData))
        XCTAssertTrue(fromBytes.listing.pages.allSatisfy { $0.storedData != nil })
    }

    /// Stored, deflated, a UTF-8 name and a name listed twice, in one archive (from vaultspeed's
    /// ZipStoredPagesTests): located offsets hold exactly the page, in a file's bytes and in the
    /// same bytes behind another type (a vault object's plaintext); doubtful members none.
    func testOnlyUnambiguousStoredMembersAreLocatedFromAFileOrOtherBytes() throws {
        let dir = ArchiveMaker.temporaryDirectory("zip-stored")
        defer { try? FileManager.default.removeItem(at: dir) }
        let archive = dir.appendingPathComponent("mixed.cbz")
        try ArchiveMaker.python("""
            import random, sys, zipfile
            rng = random.Random(5)
            def page(n): return bytes(rng.getrandbits(8) for _ in range(n))
            with zipfile.ZipFile(sys.argv[1], "w") as z:
                for name, size, mode in [("01.jpg", 70000, zipfile.ZIP_STORED), ("02.jpg", 5000, zipfile.ZIP_DEFLATED),
                                         ("Ünïcode 03.jpg", 3000, zipfile.ZIP_STORED), ("04.jpg", 100, zipfile.ZIP_STORED),
                                         ("04.jpg", 120, zipfile.ZIP_STORED)]:
                    info = zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0))
                    info.compress_type = mode
                    z.writestr(info, page(size))
            """, arguments: [archive.path])
        let file = Array(try Data(contentsOf: archive))
        let reader = try ComicOpener.open(archive.path)
        let fromBytes = try ComicOpener.open(bytes: NotAFile(try ArchiveFile(path: archive.path)), label: "object")
        XCTAssertEqual(fromBytes.listing, reader.listing)
        var found: [String: Bool] = [:]
        for page in reader.listing.pages {
            found[page.sourcePath, default: false] = found[page.sourcePath, default: false] || page.storedData != nil
            guard let stored = page.storedData else { continue }
            XCTAssertEqual(Array(file[Int(stored.offset)..<Int(stored.offset + page.size)]), try reader.readPage(page), page.sourcePath)
        }
        XCTAssertEqual(found, ["01.jpg": true, "02.jpg": false, "Ünïcode 03.jpg": true, "04.jpg": false],
                       "stored pages located; the deflated one and the ambiguous name not")

        // The first member's local header names another file than the central directory does.
        var bytes = file
        XCTAssertEqual(Array(bytes[0..<4]), [0x50, 0x4B, 0x03, 0x04])
        bytes[30] = UInt8(ascii: "9")
        let changed = dir.appendingPathComponent("changed.cbz")
        try Data(bytes).write(to: changed)
        func located(_ archive: URL) throws -> [String: StoredData] {
            let source = try FileSource(path: archive.path)
            let directory = ZipCentralDirectory(in: source, maxEntries: 100)
            let entries = directory.records.enumerated().map { index, record in
                ArchiveEntry(index: index, path: String(decoding: record.name, as: UTF8.self), kind: .file, declaredSize: record.size)
            }
            let stored = ZipStoredEntries.locate(in: source, directory: directory, entries: entries)
            return Dictionary(uniqueKeysWithValues: stored.map { (entries[$0.key].path, $0.value) })
        }
        XCTAssertEqual(try located(changed).keys.sorted(), ["Ünïcode 03.jpg"], "the others still are")
        // A truncated directory: nothing located, nothing thrown.
        let truncated = dir.appendingPathComponent("truncated.cbz")
        try Data(bytes.prefix(bytes.count - 30)).write(to: truncated)
        XCTAssertEqual(try located(truncated), [:])
    }

    func testCRC32MatchesZlib() throws {
        XCTAssertEqual(CRC32.checksum(Array("123456789".utf8)), 0xCBF4_3926)
        XCTAssertEqual(CRC32.checksum([]), 0)
        let noise = ArchiveMaker.noise(count: 10_007, seed: 9)
        let split = noise.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[5_000...]), continuing: CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[..<5_000]))) }
        XCTAssertEqual(split, CRC32.checksum(noise))
    }
}

/// The same bytes behind another type, as a vault object's are.
private final class NotAFile: RandomAccessBytes {
    let inner: ArchiveFile
    init(_ inner: ArchiveFile) { self.inner = inner }
    var size: Int64 { inner.size }
    func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
        try inner.read(at: offset, into: buffer, count: count)
    }
}

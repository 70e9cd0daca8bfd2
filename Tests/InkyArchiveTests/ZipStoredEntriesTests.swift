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
        // From bytes that are not the file (a vault object), offsets would mean nothing.
        let fromBytes = try ComicOpener.open(bytes: NotAFile(try ArchiveFile(path: stored.path)), label: "object")
        XCTAssertTrue(fromBytes.listing.pages.allSatisfy { $0.storedData == nil })
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

import Foundation
import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// The central directory names every local header, so the walk's reads can be announced up front.
final class ZipCentralDirectoryTests: XCTestCase {
    func testEveryLocalHeaderIsFoundAndDamageGivesNone() throws {
        let dir = ArchiveMaker.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let archive = dir.appendingPathComponent("c.cbz")
        try ArchiveMaker.zip(at: archive, members: (1...25).map { ("p\($0).jpg", ArchiveMaker.noise(count: 3_000 + $0, seed: UInt64($0))) })
        let bytes = try Data(contentsOf: archive)
        let offsets = ZipCentralDirectory(in: try FileSource(path: archive.path), maxEntries: 1_000).localHeaderOffsets
        XCTAssertEqual(offsets.count, 25)
        for offset in offsets {
            XCTAssertEqual(Array(bytes[Int(offset)..<Int(offset) + 4]), [0x50, 0x4B, 0x03, 0x04], "a local header at \(offset)")
        }
        XCTAssertEqual(ZipCentralDirectory(in: try FileSource(path: archive.path), maxEntries: 10).localHeaderOffsets.count, 10)

        let truncated = dir.appendingPathComponent("t.cbz")
        try bytes.prefix(bytes.count - 30).write(to: truncated)
        XCTAssertEqual(ZipCentralDirectory(in: try FileSource(path: truncated.path), maxEntries: 1_000).localHeaderOffsets, [])
        let tiny = dir.appendingPathComponent("tiny.cbz")
        try Data([0x50, 0x4B]).write(to: tiny)
        XCTAssertEqual(ZipCentralDirectory(in: try FileSource(path: tiny.path), maxEntries: 1_000).localHeaderOffsets, [])
    }

    /// The end record is looked for in the last KiB first: a comment longer than that (the
    /// record then lies further back) still finds the directory and gives the comment whole.
    func testAnEndRecordBehindALongCommentIsStillFound() throws {
        let dir = ArchiveMaker.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let archive = dir.appendingPathComponent("c.cbz")
        try ArchiveMaker.zip(at: archive, members: (1...5).map { ("p\($0).jpg", ArchiveMaker.noise(count: 500, seed: UInt64($0))) })
        let plain = try Data(contentsOf: archive)
        XCTAssertEqual(Array(plain.suffix(22).prefix(4)), [0x50, 0x4B, 0x05, 0x06], "the maker writes no comment")
        for length in [10, ZipCentralDirectory.shortTailLength - 22, ZipCentralDirectory.shortTailLength, 5_000, 65_535] {
            let comment = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            var bytes = plain
            bytes[bytes.count - 2] = UInt8(length & 0xFF)
            bytes[bytes.count - 1] = UInt8(length >> 8)
            bytes.append(contentsOf: comment)
            let commented = dir.appendingPathComponent("c\(length).cbz")
            try bytes.write(to: commented)
            let directory = ZipCentralDirectory(in: try FileSource(path: commented.path), maxEntries: 1_000)
            XCTAssertEqual(directory.localHeaderOffsets.count, 5, "comment of \(length) bytes")
            XCTAssertEqual(directory.comment, comment, "comment of \(length) bytes")
        }
    }

    /// A comic past 4 GiB ends in a ZIP64 end record (the classic one says 0xFFFFFFFF for the
    /// directory's offset): the directory is still found, and a member whose header offset fits
    /// gives its CRC-32 (also with its sizes in a ZIP64 field), so `--as cbz` reads no 4 GiB to lay
    /// out the CBZ. A member whose header offset does not fit is left to a pass over that page alone.
    func testADirectoryPast4GiBIsFoundThroughTheZIP64EndRecord() throws {
        let dir = ArchiveMaker.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let archive = dir.appendingPathComponent("big.cbz")
        try SparseZip.write(to: archive, bigPages: 1, bigSize: 4_300 << 20, after: [ArchiveMaker.noise(count: 5_000, seed: 3)])
        // The CRC-32s Python's zipfile wrote, in its order.
        let written = try ArchiveMaker.run("/usr/bin/python3", ["-c", """
            import sys, zipfile
            print(" ".join(str(i.CRC) for i in zipfile.ZipFile(sys.argv[1]).infolist()))
            """, archive.path]).split(separator: " ").compactMap { UInt32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(written.count, 2)
        let directory = ZipCentralDirectory(in: try FileSource(path: archive.path), maxEntries: 1_000)
        XCTAssertEqual(directory.records.map { String(decoding: $0.name, as: UTF8.self) }, ["001.jpg"])
        XCTAssertEqual(directory.records.map(\.crc32), [written[0]])
        let reader = try ComicOpener.open(archive.path, limits: ComicLimits(maxPageBytes: 5 << 30, maxComicBytes: 5 << 30))
        XCTAssertEqual(reader.listing.pages.map(\.crc32), [written[0], nil])
    }
}

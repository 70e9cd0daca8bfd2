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
}

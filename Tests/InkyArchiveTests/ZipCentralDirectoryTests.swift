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
}

import Foundation
import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// The liblzma 7z reader: every coder chain p7zip writes for comics reads byte for byte through
/// it (not libarchive), what it does not decode goes to libarchive, and a lying header fails
/// cleanly before anything it claims is allocated.
final class SevenZipReaderTests: XCTestCase {
    static let pages = (1...5).map { ("p\($0).jpg", ArchiveMaker.noise(count: 40_000, seed: UInt64(90 + $0)) + Array(repeating: UInt8($0), count: 30_000)) }

    private func make(_ name: String, _ switches: [String], in directory: URL) throws -> String {
        let members = directory.appendingPathComponent("members")
        try FileManager.default.createDirectory(at: members, withIntermediateDirectories: true)
        for (file, bytes) in Self.pages { try Data(bytes).write(to: members.appendingPathComponent(file)) }
        let archive = directory.appendingPathComponent(name).path
        try ArchiveMaker.run("/usr/bin/7z", ["a", "-bd", "-bso0", "-mqs=off"] + switches + [archive] + Self.pages.map(\.0), in: members)
        return archive
    }

    func testEveryCommonChainReadsThroughLiblzma() throws {
        let directory = ArchiveMaker.temporaryDirectory("7z-chains")
        defer { try? FileManager.default.removeItem(at: directory) }
        let chains: [(String, [String])] = [
            ("lzma2-solid", ["-m0=lzma2", "-ms=on"]), ("lzma-solid", ["-m0=lzma", "-ms=on"]),
            ("lzma2-files", ["-m0=lzma2", "-ms=off"]), ("copy", ["-m0=copy"]),
            ("bcj-lzma2", ["-mf=BCJ", "-m0=lzma2"]), ("delta-lzma", ["-m0=delta:4", "-m1=lzma"]),
            ("plain-header", ["-m0=lzma2", "-mhc=off"]),
        ]
        for (name, switches) in chains {
            let path = try make("\(name).cb7", switches, in: directory)
            let reader = try ComicOpener.open(path)
            XCTAssertTrue(reader is SevenZipComicReader, "\(name) went to \(type(of: reader))")
            XCTAssertEqual(reader.listing.pages.map(\.sourcePath), Self.pages.map(\.0), name)
            // Backwards too: a solid folder restarts and serves the first page again.
            for page in reader.listing.pages + reader.listing.pages.reversed() {
                XCTAssertEqual(try reader.readPage(page), Self.pages[page.entryIndex].1, "\(name) \(page.sourcePath)")
            }
        }
    }

    func testWhatLiblzmaDoesNotDecodeGoesToLibarchive() throws {
        let directory = ArchiveMaker.temporaryDirectory("7z-other")
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, switches) in [("ppmd", ["-m0=ppmd"]), ("bzip2", ["-m0=bzip2"]), ("deflate", ["-m0=deflate"])] {
            let path = try make("\(name).cb7", switches, in: directory)
            let reader = try ComicOpener.open(path)
            XCTAssertTrue(reader is LibArchiveComicReader, "\(name) went to \(type(of: reader))")
            XCTAssertEqual(try reader.readPage(reader.listing.pages[2]), Self.pages[2].1, name)
        }
    }
}

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
            ("bcj-lzma2", ["-mf=BCJ", "-m0=lzma2"]), ("bcj-lzma", ["-mf=BCJ", "-m0=lzma"]), ("delta-lzma", ["-m0=delta:4", "-m1=lzma"]),
            ("plain-header", ["-m0=lzma2", "-mhc=off"]),
        ]
        for (name, switches) in chains {
            let path = try make("\(name).cb7", switches, in: directory)
            let reader = try ComicOpener.open(path)
            XCTAssertTrue(reader is SevenZipComicReader, "\(name) went to \(type(of: reader))")
            // The bytes a worker gets for a vault object (and the archive fuzz target feeds) take it too.
            let fromBytes = try ComicOpener.open(bytes: FuzzFindingTests.MemoryBytes([UInt8](Data(contentsOf: URL(fileURLWithPath: path)))), label: name)
            XCTAssertTrue(fromBytes is SevenZipComicReader, "\(name) from bytes went to \(type(of: fromBytes))")
            XCTAssertEqual(reader.listing.pages.map(\.sourcePath), Self.pages.map(\.0), name)
            // The headers' CRC-32s come with the listing, for a CBZ without a pass over the pages.
            XCTAssertEqual(reader.listing.pages.map(\.crc32), Self.pages.map { CRC32.checksum($0.1) }, name)
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

    /// Every 7z of the corpus and the fixtures that the liblzma reader takes: every entry with
    /// data (pages or not) reads as `7z x` extracts it, and the pages are libarchive's.
    func testTheCorpus7zFilesReadAs7zExtractsThem() throws {
        try Corpus.skipUnlessPresent()
        let files = [Corpus.root, Corpus.fixtures].flatMap { root in
            (FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? [])
                .filter { ["7z", "cb7"].contains(($0 as NSString).pathExtension.lowercased()) && !$0.contains("Vault/") }
                .map { root.appendingPathComponent($0).path }
        }
        let scratch = ArchiveMaker.temporaryDirectory("7z-extract")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var taken = 0, compared = 0
        for (number, path) in files.sorted().enumerated() {
            guard let archive = try? SevenZipArchive.read(FileSource(path: path), limits: .default),
                  archive.folders.allSatisfy({ $0.isDecodable }) else { continue }
            taken += 1
            let out = scratch.appendingPathComponent("\(number)")
            guard try CommandRunner.capture("/usr/bin/7z", ["x", "-y", "-bd", "-o" + out.path, path]).status == 0 else { continue }
            let reader = SevenZipComicReader(archive: archive, source: try FileSource(path: path), limits: .default,
                                             listing: ComicListing(format: .sevenZip, pages: [], comicInfo: nil, skipped: [], isSolid: true))
            // Backwards, so each solid folder also restarts.
            for entry in archive.entries.reversed() where entry.kind == .file && !entry.path.hasPrefix("/") && !entry.path.contains("..") {
                guard let expected = FileManager.default.contents(atPath: out.appendingPathComponent(entry.path).path) else { continue }
                var bytes: [UInt8] = []
                let read = Result { () throws(ComicError) in
                    try reader.stream(entryIndex: entry.index, name: entry.path, size: entry.declaredSize ?? 0) { bytes += $0 }
                }
                // A 500:1 binary: the page policy refuses it, as it does through libarchive.
                if case .failure(.limitExceeded) = read { continue }
                XCTAssertNoThrow(try read.get(), "\(path) \(entry.path)")
                XCTAssertEqual(bytes, [UInt8](expected), "\(path) \(entry.path)")
                compared += 1
            }
            guard let ours = try? SevenZipComicReader.open(source: FileSource(path: path), limits: .default),
                  let theirs = try? LibArchiveComicReader(path: path, format: .sevenZip, limits: .default) else { continue }
            XCTAssertEqual(ours.listing.pages.map(\.sourcePath), theirs.listing.pages.map(\.sourcePath), path)
        }
        // Exact counts, as measured on ../shared/corpus and Fixtures/: a reader that stops taking
        // a coder chain, or takes one it cannot decode, moves them (more is as much news as fewer).
        XCTAssertEqual(files.count, 117, "7z files in the corpus and the fixtures")
        XCTAssertEqual(taken, 60, "of \(files.count) 7z files the liblzma reader takes")
        XCTAssertEqual(compared, 147, "entries compared with 7z x")
        print("liblzma reader: \(taken) of \(files.count) 7z files, \(compared) entries compared with 7z x")
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// A damaged page costs only itself: one flipped byte in page k (first, middle, last) of each
/// container fails that page with EIO and every other page still reads byte for byte, also
/// when read again after the failure. In a solid LZMA stream the pages after the damage may
/// fail, but the pages before it must read, before and after the failure.
final class MountDamageTests: XCTestCase {
    /// Unique noise: each page can be found in a stored (or stored-block deflated) archive.
    static let noisePages = (1...5).map { ("p\($0).jpg", ArchiveMaker.noise(count: 30_000, seed: UInt64(500 + 2 * $0))) }

    func testAFlippedByteInOnePageFailsOnlyThatPage() throws {
        let library = ArchiveMaker.temporaryDirectory("damage")
        let scratch = ArchiveMaker.temporaryDirectory("damage-intact")
        defer {
            try? FileManager.default.removeItem(at: library)
            try? FileManager.default.removeItem(at: scratch)
        }
        let kinds: [GeneratedComic.Container] = [.zipStored, .zipDeflated, .rar5, .sevenZipCopy]
        try GeneratedComic.write(kinds.map { .init(Self.noisePages, as: $0, to: scratch.appendingPathComponent($0.fileName($0.rawValue))) })
        var comics: [(name: String, bad: Int)] = []
        for kind in kinds {
            let intact = try Data(contentsOf: scratch.appendingPathComponent(kind.fileName(kind.rawValue)))
            for bad in [1, 3, 5] {
                var bytes = intact
                try bytes[dataOffset(of: bad, in: bytes, kind) + 1_000] ^= 0x5A
                let name = "\(kind.rawValue) bad \(bad)"
                try bytes.write(to: library.appendingPathComponent(kind.fileName(name)))
                comics.append((name, bad))
            }
        }
        let expected = try writeExpectedPages(Self.noisePages.map(\.1))
        defer { try? FileManager.default.removeItem(at: expected) }
        let mount = try MountedLibrary(library: library)
        for comic in comics {
            let directory = mount.path(comic.name)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).count, 5, comic.name)
            // Forward, then again: a failure must not have cost the pages read after it.
            for pass in 1...2 {
                for number in 1...5 {
                    let outcome = try compare(directory, page: number, with: expected)
                    XCTAssertEqual(outcome, number == comic.bad ? .inputOutputError : .same, "\(comic.name), page \(number), pass \(pass)")
                }
            }
        }
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// 7z's own test (`7z t`) judges which pages a damaged 7z still holds, and the mount must
    /// agree page for page: every page it fails fails with EIO, never as other bytes; every page
    /// it reads reads byte for byte, before and after the pages behind the damage failed (read
    /// backwards first, so the first read of a good page comes after a failure). The damage is
    /// one flipped byte in the middle of the packed data; in a solid folder that costs the page
    /// holding it and those after it, in one folder per page only that page.
    func testA7zServesEveryPage7zItselfReadsAroundTheDamage() throws {
        let library = ArchiveMaker.temporaryDirectory("damage-7z")
        let members = ArchiveMaker.temporaryDirectory("damage-7z-members")
        defer {
            try? FileManager.default.removeItem(at: library)
            try? FileManager.default.removeItem(at: members)
        }
        // Compressible pages (LZMA really codes them), each larger than one 64 KiB window.
        let words = ["ink", "panel", "gutter", "balloon", "splash", "inker", "letterer", "cover"]
        var generator = SeededGenerator(seed: 77)
        let pages = (1...5).map { number in
            ("p\(number).jpg", Array((0..<20_000).map { _ in words.randomElement(using: &generator)! }.joined(separator: " ").utf8))
        }
        for (name, bytes) in pages { try Data(bytes).write(to: members.appendingPathComponent(name)) }
        let kinds: [(name: String, switches: [String], isSolid: Bool)] = [
            ("lzma2 solid", ["-m0=lzma2", "-ms=on"], true), ("lzma solid", ["-m0=lzma", "-ms=on"], true),
            ("lzma2 per page", ["-m0=lzma2", "-ms=off"], false),
        ]
        var failing: [String: Set<Int>] = [:]
        for kind in kinds {
            let comic = library.appendingPathComponent("\(kind.name).cb7")
            try ArchiveMaker.run("/usr/bin/7z", ["a", "-bd", "-bso0", "-mqs=off"] + kind.switches + [comic.path] + pages.map(\.0), in: members)
            var bytes = try Data(contentsOf: comic)
            // The packed data runs from byte 32 to the header, whose offset the start header holds.
            let packed = bytes[12..<20].reversed().reduce(0) { $0 << 8 | Int($1) }
            bytes[32 + packed / 2] ^= 0xFF
            try bytes.write(to: comic)
            let test = try CommandRunner.capture("/usr/bin/7z", ["t", comic.path])
            let lines = (test.stdout + test.stderr).split(separator: "\n")
            let bad = Set(pages.indices.filter { index in lines.contains { $0.hasPrefix("ERROR:") && $0.hasSuffix(" : \(pages[index].0)") } }.map { $0 + 1 })
            let firstBad = try XCTUnwrap(bad.min(), "\(kind.name): the damage went unnoticed: \(test.stdout)")
            XCTAssertGreaterThan(firstBad, 2, "\(kind.name): 7z itself reads less than two pages: the test proves nothing\n\(test.stdout)")
            XCTAssertEqual(bad, kind.isSolid ? Set(firstBad...5) : [firstBad], "\(kind.name): \(test.stdout)")
            failing[kind.name] = bad
        }
        let expected = try writeExpectedPages(pages.map(\.1))
        defer { try? FileManager.default.removeItem(at: expected) }
        let mount = try MountedLibrary(library: library)
        for kind in kinds {
            for pass in 1...2 {
                for number in [5, 4, 3, 2, 1] + [1, 2, 3, 4, 5] {
                    let outcome = try compare(mount.path(kind.name), page: number, with: expected)
                    let wanted: Outcome = failing[kind.name]!.contains(number) ? .inputOutputError : .same
                    XCTAssertEqual(outcome, wanted, "\(kind.name), page \(number), pass \(pass)")
                }
            }
        }
        XCTAssertTrue(mount.isDaemonAlive)
    }

    func testATarWithOneDamagedMemberHeaderListsEveryOtherPage() throws {
        let library = ArchiveMaker.temporaryDirectory("damage-tar")
        defer { try? FileManager.default.removeItem(at: library) }
        let intactURL = library.appendingPathComponent("intact.cbt")
        try GeneratedComic.write(Self.noisePages, as: .tar, to: intactURL)
        let intact = try Data(contentsOf: intactURL)
        try FileManager.default.removeItem(at: intactURL)
        for bad in [1, 3, 5] {
            var bytes = intact
            let data = try XCTUnwrap(bytes.range(of: Data(Self.noisePages[bad - 1].1)))
            bytes[data.lowerBound - 512] ^= 0x01     // the member's name: its header checksum fails
            let comic = library.appendingPathComponent("tar bad \(bad).cbt")
            try bytes.write(to: comic)
            // The member is left out, and the listing says so, though its name is lost.
            let listing = try CommandRunner.inkyfs(["pages", comic.path]).stdout
            XCTAssertTrue(listing.contains("skipped: (header at byte \(data.lowerBound - 512)): damaged header"), listing)
        }
        let mount = try MountedLibrary(library: library)
        for bad in [1, 3, 5] {
            let kept = Self.noisePages.indices.filter { $0 != bad - 1 }.map { Self.noisePages[$0].1 }
            let expected = try writeExpectedPages(kept)
            defer { try? FileManager.default.removeItem(at: expected) }
            let directory = mount.path("tar bad \(bad)")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).sorted(),
                           ["001.jpg", "002.jpg", "003.jpg", "004.jpg"], "tar bad \(bad)")
            for number in 1...4 {
                XCTAssertEqual(try compare(directory, page: number, with: expected), .same, "tar bad \(bad), page \(number)")
            }
        }
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// Where page `number`'s data begins: its bytes as stored, or for deflated ZIP members right
    /// after the local header's name (Python's zipfile writes no extra field there).
    private func dataOffset(of number: Int, in archive: Data, _ kind: GeneratedComic.Container) throws -> Int {
        let (name, page) = Self.noisePages[number - 1]
        if kind == .zipDeflated {
            return try XCTUnwrap(archive.range(of: Data(name.utf8))).upperBound
        }
        return try XCTUnwrap(archive.range(of: Data(page)), "\(kind.rawValue): page \(number) not stored as is").lowerBound
    }

    enum Outcome: Equatable {
        case same, different, inputOutputError, other(String)
    }

    /// Page files `1`, `2`, … in a scratch folder, for `cmp`.
    private func writeExpectedPages(_ pages: [[UInt8]]) throws -> URL {
        let folder = ArchiveMaker.temporaryDirectory("expected")
        for (index, page) in pages.enumerated() {
            try Data(page).write(to: folder.appendingPathComponent("\(index + 1)"))
        }
        return folder
    }

    /// `cmp` of page `number` (named `00N.jpg` in the mount) with the expected bytes.
    private func compare(_ directory: String, page number: Int, with expected: URL) throws -> Outcome {
        let page = "\(directory)/" + String(format: "%03d.jpg", number)
        let result = try CommandRunner.capture("/usr/bin/cmp", [expected.appendingPathComponent("\(number)").path, page])
        switch result.status {
        case 0: return .same
        case 1: return .different
        default: return result.stderr.contains("Input/output error") ? .inputOutputError : .other(result.stderr)
        }
    }
}

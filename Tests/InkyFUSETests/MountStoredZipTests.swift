import Foundation
import InkyTestSupport
import XCTest

/// Stored ZIP pages are read by the daemon straight from the archive file (one pread, then
/// the central directory's CRC-32): through the kernel they must be the members byte for byte,
/// beside deflated members of the same archive, and damage or a swapped file must give EIO or
/// ESTALE, never other bytes.
final class MountStoredZipTests: XCTestCase {
    /// Members alternately stored and deflated (odd members deflated when `mixed`).
    static func zip(at url: URL, _ members: [(String, [UInt8])], mixed: Bool) throws {
        try ArchiveMaker.zip(at: url, members: members.enumerated().map { index, member in
            (member.0, member.1, deflated: mixed && index % 2 == 1)
        })
    }

    /// Pages of a size that crosses the folding CRC's 64- and 16-byte steps in every way.
    private static let pages = [17, 1, 63, 64, 65, 1_000, 65_537, 300_001].enumerated().map { index, count in
        ("p\(index + 1).jpg", ArchiveMaker.noise(count: count, seed: UInt64(40 + index)))
    }

    private func errnoOfReading(_ path: String) -> Int32 {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let got = read(fd, &buffer, buffer.count)
            if got < 0 { return errno }
            if got == 0 { return 0 }
        }
    }

    /// Where `member`'s bytes begin in the archive file (each noise member is unique).
    private func offset(of member: [UInt8], in archive: URL) throws -> Int {
        let bytes = try Data(contentsOf: archive)
        return try XCTUnwrap(bytes.range(of: Data(member))?.lowerBound)
    }

    func testStoredAndMixedComicsServeEveryPageByteForByte() throws {
        let library = ArchiveMaker.temporaryDirectory("stored")
        defer { try? FileManager.default.removeItem(at: library) }
        try Self.zip(at: library.appendingPathComponent("Stored.cbz"), Self.pages, mixed: false)
        try Self.zip(at: library.appendingPathComponent("Mixed.cbz"), Self.pages, mixed: true)
        let mount = try MountedLibrary(library: library)
        for comic in ["Stored", "Mixed"] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path(comic)).count, Self.pages.count, comic)
            // Backwards, so no page was prefetched by the one before.
            for (number, page) in Self.pages.enumerated().reversed() {
                let name = String(format: "%03d.jpg", number + 1)
                XCTAssertEqual(try readFile(mount.path("\(comic)/\(name)")), page.1, "\(comic)/\(name)")
                let attributes = try FileManager.default.attributesOfItem(atPath: mount.path("\(comic)/\(name)"))
                XCTAssertEqual((attributes[.size] as? NSNumber)?.intValue, page.1.count, "\(comic)/\(name)")
            }
        }
        XCTAssertTrue(mount.isDaemonAlive)
    }

    func testSingleStoredComicMountServesItsPages() throws {
        let dir = ArchiveMaker.temporaryDirectory("single")
        defer { try? FileManager.default.removeItem(at: dir) }
        let comic = dir.appendingPathComponent("One.cbz")
        try Self.zip(at: comic, Self.pages, mixed: false)
        let mount = try MountedLibrary(library: comic)
        XCTAssertEqual(try readFile(mount.path("008.jpg")), Self.pages[7].1)
        XCTAssertEqual(try readFile(mount.path("001.jpg")), Self.pages[0].1)
    }

    func testAFlippedByteInAStoredPageIsEIONotWrongBytes() throws {
        let library = ArchiveMaker.temporaryDirectory("flipped")
        defer { try? FileManager.default.removeItem(at: library) }
        let comic = library.appendingPathComponent("Damaged.cbz")
        try Self.zip(at: comic, Self.pages, mixed: false)
        let at = try offset(of: Self.pages[6].1, in: comic) + 40_000
        var bytes = try Data(contentsOf: comic)
        bytes[at] ^= 0x20
        try bytes.write(to: comic)
        let mount = try MountedLibrary(library: library)
        XCTAssertEqual(errnoOfReading(mount.path("Damaged/007.jpg")), EIO, "the CRC-32 catches the flipped byte")
        XCTAssertEqual(errnoOfReading(mount.path("Damaged/007.jpg")), EIO, "and keeps catching it")
        XCTAssertEqual(try readFile(mount.path("Damaged/008.jpg")), Self.pages[7].1, "the other pages are unharmed")
        XCTAssertEqual(try readFile(mount.path("Damaged/006.jpg")), Self.pages[5].1)
        XCTAssertTrue(mount.isDaemonAlive)
        let deadline = Date().addingTimeInterval(5)
        while !mount.logText.contains("CRC-32") && Date() < deadline { usleep(20_000) }
        XCTAssertTrue(mount.logText.contains("CRC-32"), "the log says why: \(mount.logText)")
    }

    /// The worst case for the identity check: the bytes change but size, mtime and inode are put
    /// back, so only the CRC can tell.
    func testBytesChangedBehindAnUnchangedIdentityAreEIO() throws {
        let library = ArchiveMaker.temporaryDirectory("sneaky")
        defer { try? FileManager.default.removeItem(at: library) }
        let comic = library.appendingPathComponent("Sneaky.cbz")
        try Self.zip(at: comic, Self.pages, mixed: false)
        let mount = try MountedLibrary(library: library)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Sneaky")).count, Self.pages.count)
        var before = stat()
        XCTAssertEqual(stat(comic.path, &before), 0)
        let at = try offset(of: Self.pages[5].1, in: comic)
        let handle = try FileHandle(forWritingTo: comic)
        try handle.seek(toOffset: UInt64(at + 10))
        try handle.write(contentsOf: Data([0x00, 0x11, 0x22, 0x33]))
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, comic.path, &times, 0), 0)
        var after = stat()
        XCTAssertEqual(stat(comic.path, &after), 0)
        XCTAssertEqual([after.st_ino, UInt(after.st_size)], [before.st_ino, UInt(before.st_size)])
        XCTAssertEqual(errnoOfReading(mount.path("Sneaky/006.jpg")), EIO)
        XCTAssertEqual(try readFile(mount.path("Sneaky/005.jpg")), Self.pages[4].1)
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// Replaced by rename after a page was read (the daemon holds the old file open): the next
    /// page is the new archive's, never the old file's.
    func testAnArchiveReplacedUnderTheMountServesOnlyTheNewBytes() throws {
        let library = ArchiveMaker.temporaryDirectory("replaced")
        defer { try? FileManager.default.removeItem(at: library) }
        let comic = library.appendingPathComponent("Issue.cbz")
        try Self.zip(at: comic, Self.pages, mixed: false)
        let mount = try MountedLibrary(library: library)
        XCTAssertEqual(try readFile(mount.path("Issue/008.jpg")), Self.pages[7].1)
        let replacement = Self.pages.enumerated().map { index, page in
            (page.0, ArchiveMaker.noise(count: page.1.count + 7, seed: UInt64(900 + index)))
        }
        let staging = library.appendingPathComponent(".Issue.tmp")
        try Self.zip(at: staging, replacement, mixed: true)
        XCTAssertEqual(rename(staging.path, comic.path), 0)
        for number in [6, 7, 4] {   // 008 was cached under the old generation
            XCTAssertEqual(try readFile(mount.path(String(format: "Issue/%03d.jpg", number + 1))), replacement[number].1, "page \(number + 1)")
        }
        // Truncated in place: the old listing's ranges now run past the end.
        let truncate = try FileHandle(forWritingTo: comic)
        try truncate.truncate(atOffset: 1_000)
        try truncate.close()
        XCTAssertNotEqual(errnoOfReading(mount.path("Issue/008.jpg")), 0)
        XCTAssertTrue(mount.isDaemonAlive)
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// `--as cbz` shows a folder of loose images as one CBZ, checked like an archive by the folder's
/// size, mtime and inode. A page file rewritten in place (same name, same file: an editor saving
/// over it) moves none of them. Once the library watcher has seen the write (the log says the
/// comic was listed again; the watcher reports ~0.3 s after a write, docs/usage.md), the CBZ holds
/// the new page as Python's zipfile reads it (CRC-32s checked), never the old one, and a CBZ
/// opened before fails instead of serving it.
final class MountLoosePageRewriteTests: XCTestCase {
    private static let marker = "a page changed in place: listed again"

    func testAPageRewrittenInPlaceShowsInTheCBZAndTheOldBytesNever() throws {
        let library = ArchiveMaker.temporaryDirectory("loose-lib")
        defer { try? FileManager.default.removeItem(at: library) }
        let folder = library.appendingPathComponent("Sketches")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let pages = (1...3).map { ArchiveMaker.noise(count: 90_000 + $0 * 1_001, seed: UInt64(40 + $0)) }
        for (number, bytes) in pages.enumerated() { try Data(bytes).write(to: folder.appendingPathComponent("page \(number + 1).jpg")) }
        let mount = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead", "--no-continue"])
        defer { mount.unmount() }
        let cbz = mount.path("Sketches.cbz")
        XCTAssertEqual(try ReferenceArchive.zipMembers(cbz), ["001.jpg": pages[0], "002.jpg": pages[1], "003.jpg": pages[2]])
        // A CBZ open from before the change; its pages are in the daemon's window cache and the kernel's.
        let early = open(cbz, O_RDONLY)
        XCTAssertGreaterThanOrEqual(early, 0)
        let folderBefore = try Self.identity(folder.path)

        // Same size, new bytes, written over the old ones.
        let rewritten = ArchiveMaker.noise(count: pages[1].count, seed: 99)
        try Self.writeInPlace(rewritten, folder.appendingPathComponent("page 2.jpg").path)
        XCTAssertEqual(try Self.identity(folder.path), folderBefore, "the premise: the folder's own size, mtime and inode did not move")
        XCTAssertTrue(waitUntil(10) { Self.count(of: Self.marker, in: mount.logText) >= 1 }, "the watcher saw the write: \(mount.logText)")
        XCTAssertEqual(try ReferenceArchive.zipMembers(cbz), ["001.jpg": pages[0], "002.jpg": rewritten, "003.jpg": pages[2]],
                       "the new page, never the old one, once the change was seen")
        // The CBZ opened before fails (its layout is gone), rather than serve the old bytes.
        var buffer = [UInt8](repeating: 0, count: 65_536)
        XCTAssertEqual(pread(early, &buffer, buffer.count, 0), -1, "a CBZ opened before the change")
        XCTAssertEqual(errnoName(errno), errnoName(ESTALE), "its layout is gone with its generation")
        // Closed before the unmount: a lazy unmount waits for the last open file.
        close(early)

        // Another size (truncated and written again: still the same file): laid out anew around it.
        let longer = ArchiveMaker.noise(count: pages[2].count + 5_000, seed: 100)
        try Self.writeInPlace(longer, folder.appendingPathComponent("page 3.jpg").path, truncating: true)
        XCTAssertTrue(waitUntil(10) { Self.count(of: Self.marker, in: mount.logText) >= 2 }, "the watcher saw the second write")
        XCTAssertEqual(try ReferenceArchive.zipMembers(cbz), ["001.jpg": pages[0], "002.jpg": rewritten, "003.jpg": longer])
        XCTAssertEqual(mount.unmount(), 0)
    }

    /// Writes `bytes` over the file at `path`, the same file (inode) throughout.
    private static func writeInPlace(_ bytes: [UInt8], _ path: String, truncating: Bool = false) throws {
        var before = stat()
        XCTAssertEqual(stat(path, &before), 0)
        let fd = open(path, O_WRONLY | (truncating ? O_TRUNC : 0))
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        XCTAssertEqual(pwrite(fd, bytes, bytes.count, 0), bytes.count)
        XCTAssertEqual(close(fd), 0)
        var after = stat()
        XCTAssertEqual(stat(path, &after), 0)
        XCTAssertEqual(after.st_ino, before.st_ino, "rewritten in place, not replaced")
    }

    private static func identity(_ path: String) throws -> [Int64] {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw POSIXError(.ENOENT) }
        return [Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec), Int64(bitPattern: UInt64(info.st_ino))]
    }

    private static func count(of text: String, in log: String) -> Int { log.components(separatedBy: text).count - 1 }
}

import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// Archives replaced, deleted and added under a live mount: old bytes are never served.
final class MountChangeTests: XCTestCase {
    /// A comic deleted and added back starts its generations anew in a new state: were they
    /// counted from 0 again, its pages would get the old pages' inode numbers, and the kernel
    /// would serve what it kept of the old file (same size and mtime: nothing tells it otherwise).
    func testAComicDeletedAndAddedBackNeverServesTheOldPagesKernelCache() throws {
        let library = ArchiveMaker.temporaryDirectory("readd")
        defer { try? FileManager.default.removeItem(at: library) }
        let old = ArchiveMaker.noise(count: 30_000, seed: 1), new = ArchiveMaker.noise(count: 30_000, seed: 2)
        let comic = library.appendingPathComponent("Issue.cbz")
        try ArchiveMaker.zip(at: comic, members: [("p1.jpg", old)])
        let modified = try FileManager.default.attributesOfItem(atPath: comic.path)[.modificationDate] as! Date
        let mount = try MountedLibrary(library: library)
        XCTAssertEqual(try readFile(mount.path("Issue/001.jpg")), old)
        // A reader still holding the old page keeps its inode, and its cached bytes, alive.
        let holder = open(mount.path("Issue/001.jpg"), O_RDONLY)
        XCTAssertGreaterThanOrEqual(holder, 0)
        defer { close(holder) }

        try FileManager.default.removeItem(at: comic)
        let gone = Date().addingTimeInterval(3)
        while FileManager.default.fileExists(atPath: mount.path("Issue/001.jpg")) && Date() < gone { usleep(50_000) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Issue")))
        try ArchiveMaker.zip(at: comic, members: [("p1.jpg", new)])
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: comic.path)
        let back = Date().addingTimeInterval(3)
        while !FileManager.default.fileExists(atPath: mount.path("Issue/001.jpg")) && Date() < back { usleep(50_000) }
        XCTAssertEqual(try readFile(mount.path("Issue/001.jpg")), new, "the new file's page, not the kernel's copy of the old one")
    }

    /// A file rewritten in place whose hash has the old file's low 12 bits, which is all page
    /// inode numbers carried of it: its pages got the old pages' numbers, and a page read right
    /// after the change (before the watcher's invalidation lands) came from the kernel's copy of
    /// the old file. A changed comic's pages are now numbered apart (`ComicGenerations`).
    func testAChangedComicWhoseHashCollidesNeverServesTheOldPagesKernelCache() throws {
        let library = ArchiveMaker.temporaryDirectory("collide")
        defer { try? FileManager.default.removeItem(at: library) }
        let old = ArchiveMaker.noise(count: 30_000, seed: 7), new = ArchiveMaker.noise(count: 30_000, seed: 9)
        let comic = library.appendingPathComponent("Issue.cbz"), staging = library.appendingPathComponent("new.zip.tmp")
        try ArchiveMaker.zip(at: comic, members: [("p1.jpg", old)])
        try ArchiveMaker.zip(at: staging, members: [("p1.jpg", new)])
        let before = try FileIdentity.of(comic.path).get()
        let mount = try MountedLibrary(library: library)
        XCTAssertEqual(try readFile(mount.path("Issue/001.jpg")), old)

        // In place, so the inode and size stay; then the mtime that makes the hashes collide.
        try Data(contentsOf: staging).write(to: comic, options: [])
        var after = try FileIdentity.of(comic.path).get()
        XCTAssertEqual([after.inode, UInt64(after.size)], [before.inode, UInt64(before.size)])
        repeat { after.modifiedNanoseconds += 1 } while after.generation & 0xFFF != before.generation & 0xFFF
        // UTIME_OMIT ((1 << 30) - 2; the macro is not imported) leaves the access time.
        let times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2),
                     timespec(tv_sec: Int(after.modifiedNanoseconds / 1_000_000_000), tv_nsec: Int(after.modifiedNanoseconds % 1_000_000_000))]
        XCTAssertEqual(utimensat(AT_FDCWD, comic.path, times, 0), 0)
        XCTAssertEqual(try FileIdentity.of(comic.path).get(), after)

        // Right away: the kernel still holds the old page's name (the watcher waits 0.3 s for
        // writes to settle). Failing is fine (the old number is stale); the old bytes are not.
        if let first = try? readFile(mount.path("Issue/001.jpg")) {
            XCTAssertEqual(first, new, "the rewritten file's page, not the kernel's copy of the old one")
        }
        let settled = Date().addingTimeInterval(3)
        while (try? readFile(mount.path("Issue/001.jpg"))) != new && Date() < settled { usleep(50_000) }
        XCTAssertEqual(try readFile(mount.path("Issue/001.jpg")), new)
    }

    /// The same file renamed away and back is the same comic: a reader holding a page open
    /// reads on, as it did before the rename.
    func testAComicRenamedAwayAndBackKeepsItsOpenPagesReadable() throws {
        let library = ArchiveMaker.temporaryDirectory("renameback")
        defer { try? FileManager.default.removeItem(at: library) }
        let page = ArchiveMaker.noise(count: 3_000_000, seed: 3)
        let comic = library.appendingPathComponent("Issue.cbz"), away = library.appendingPathComponent("Issue.away")
        try ArchiveMaker.zip(at: comic, members: [("p1.jpg", page)])
        let mount = try MountedLibrary(library: library)
        let fd = open(mount.path("Issue/001.jpg"), O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 4096)
        XCTAssertEqual(pread(fd, &head, head.count, 0), 4096)

        XCTAssertEqual(rename(comic.path, away.path), 0)
        let gone = Date().addingTimeInterval(3)
        while FileManager.default.fileExists(atPath: mount.path("Issue")) && Date() < gone { usleep(50_000) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Issue")))
        // A lookup meanwhile may find the file missing (the daemon then forgets the comic's state).
        _ = FileManager.default.fileExists(atPath: mount.path("Issue/001.jpg"))
        XCTAssertEqual(rename(away.path, comic.path), 0)
        let back = Date().addingTimeInterval(3)
        while !FileManager.default.fileExists(atPath: mount.path("Issue/001.jpg")) && Date() < back { usleep(50_000) }

        // Past what the kernel may have read ahead: these bytes come from the daemon now.
        var tail = [UInt8](repeating: 0, count: 100_000)
        XCTAssertEqual(pread(fd, &tail, tail.count, 2_600_000), 100_000, "read on: \(String(cString: strerror(errno)))")
        XCTAssertEqual(Array(tail), Array(page[2_600_000..<2_700_000]))
    }

    func testReplacedDeletedAndAddedArchivesAreNoticed() throws {
        let library = ArchiveMaker.temporaryDirectory("live")
        defer { try? FileManager.default.removeItem(at: library) }
        let oldPages = (1...3).map { ArchiveMaker.noise(count: 10_000 + $0, seed: UInt64($0)) }
        let newPages = (1...4).map { ArchiveMaker.noise(count: 20_000 + $0, seed: UInt64(100 + $0)) }
        let comic = library.appendingPathComponent("Issue.cbz")
        try ArchiveMaker.zip(at: comic, members: oldPages.enumerated().map { ("p\($0.offset + 1).jpg", $0.element) })
        let mount = try MountedLibrary(library: library)

        XCTAssertEqual(try readFile(mount.path("Issue/001.jpg")), oldPages[0])
        // Replace the archive by rename, as downloaders and taggers do.
        let staging = library.appendingPathComponent(".Issue.cbz.tmp")
        try ArchiveMaker.zip(at: staging, members: newPages.enumerated().map { ("p\($0.offset + 1).jpg", $0.element) })
        XCTAssertEqual(rename(staging.path, comic.path), 0)
        XCTAssertEqual(try readFile(mount.path("Issue/001.jpg")), newPages[0], "the new archive's page, not the cached old one")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Issue")).count, 4)
        XCTAssertEqual(try readFile(mount.path("Issue/004.jpg")), newPages[3])

        // Rewrite in place (same inode, new size and mtime).
        let rewritten = library.appendingPathComponent("rewrite.zip.tmp")
        try ArchiveMaker.zip(at: rewritten, members: [("only.jpg", oldPages[2])])
        try Data(contentsOf: rewritten).write(to: comic, options: [])
        try FileManager.default.removeItem(at: rewritten)
        XCTAssertEqual(try readFile(mount.path("Issue/001.jpg")), oldPages[2])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Issue")), ["001.jpg"])

        try FileManager.default.removeItem(at: comic)
        XCTAssertEqual(errnoName(readErrno(mount.path("Issue/001.jpg"))), errnoName(ENOENT), "deleted comics are gone")
        // The kernel keeps a comic's name for --tree-timeout (10 s): the library watcher tells it
        // to forget the deleted one, after its debounce (0.3 s).
        let deadline = Date().addingTimeInterval(5)
        while FileManager.default.fileExists(atPath: mount.path("Issue")) && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Issue")), "the watcher made the kernel forget it")

        try ArchiveMaker.zip(at: library.appendingPathComponent("Later.cbz"), members: [("a.jpg", newPages[1])])
        XCTAssertEqual(try readFile(mount.path("Later/001.jpg")), newPages[1], "new comics appear")
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: mount.mountpoint.path).contains("Later"))
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// A name of one character: this Foundation's NSString path methods trap on a one-character
    /// path, and the watcher's handler passed the folder "B", made while mounted, through them
    /// (its parent, its name; the CBZ names of `--as cbz`; the Reading Lists view's listener):
    /// the daemon died, and the mount with it. The new folder's comic must show instead.
    func testAOneLetterFolderMadeWhileMountedShowsAndCrashesNothing() throws {
        let library = ArchiveMaker.temporaryDirectory("one-letter")
        defer { try? FileManager.default.removeItem(at: library) }
        let page = ArchiveMaker.noise(count: 20_000, seed: 7)
        try FileManager.default.createDirectory(at: library.appendingPathComponent("A"), withIntermediateDirectories: true)
        try ArchiveMaker.zip(at: library.appendingPathComponent("A/Issue.cbz"), members: [("p.jpg", page)])
        let mount = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--views", "lists", "--no-list-ahead", "--no-continue"])
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: mount.path("")).contains("A"))
        let folder = library.appendingPathComponent("B")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try ArchiveMaker.zip(at: folder.appendingPathComponent("Issue.cbz"), members: [("p.jpg", page)])
        // The kernel keeps the root's listing until the watcher's handler has taken "B" (0.3 s
        // after): "B" in it is that handler's work, done (a lookup of "B" alone would not be).
        XCTAssertTrue(waitUntil(10) { (try? FileManager.default.contentsOfDirectory(atPath: mount.path("")))?.contains("B") == true },
                      "B shows in the root's listing: \(mount.logText)")
        XCTAssertEqual(try ReferenceArchive.zipMembers(mount.path("B/Issue.cbz")), ["001.jpg": page])
        XCTAssertTrue(mount.isDaemonAlive, mount.logText)
        XCTAssertEqual(mount.unmount(), 0)
    }
}

import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// An unmount ends the daemon promptly, after real use: workers ended, reading state written.
final class MountExitTests: XCTestCase {
    func testTheDaemonIsGoneWithinHalfASecondOfAnUnmountAfterHeavyUse() throws {
        let mounted = try MountedLibrary(library: Corpus.fixtures)
        defer { mounted.unmount() }
        // Use as a reader would, several at once: every page of every comic, twice over.
        _ = try ArchiveMaker.run("/usr/bin/ls", ["-lR", mounted.mountpoint.path])
        let pages = try ArchiveMaker.run("/usr/bin/find", [mounted.mountpoint.path, "-type", "f", "-name", "0*"])
            .split(separator: "\n").map(String.init)
        XCTAssertGreaterThan(pages.count, 20)
        DispatchQueue.concurrentPerform(iterations: 4) { reader in
            for (index, page) in (pages + pages).enumerated() where index % 4 == reader { _ = FileManager.default.contents(atPath: page) }
        }
        let workers = mounted.workerPIDs
        XCTAssertFalse(workers.isEmpty, "pages were parsed by workers")

        let started = Date()
        try mounted.unmountOnceFree()
        // How soon it exits is scripts/bench's to measure; that it exits at all is bounded here.
        XCTAssertTrue(waitUntil(120) { !mounted.process.isRunning }, "the daemon exits after the unmount")
        XCTAssertEqual(mounted.process.waitForExit(), 0, mounted.logText)
        print("daemon gone \(Int(Date().timeIntervalSince(started) * 1000)) ms after fusermount3 -u was started")
        // A live worker still has its command line (a zombie's is empty, a reused pid's differs).
        let alive = workers.filter { ((try? String(contentsOfFile: "/proc/\($0)/cmdline", encoding: .utf8)) ?? "").contains("inkyfs-worker") }
        XCTAssertEqual(alive, [], "the workers ended with it")
        XCTAssertTrue(mounted.logSays("unmounted"), mounted.logText)
        // What was read is in the state database: the writes were finished before the exit.
        let database = mounted.stateHome.appendingPathComponent("inkyfs/state.sqlite").path
        let rows = try ArchiveMaker.run("/usr/bin/sqlite3", [database, "SELECT count(*) FROM reading"])
        XCTAssertGreaterThan(Int(rows.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 3, "reading state written")
    }

    /// Pages read right before an unmount: once the daemon is gone their progress is in the
    /// database file itself, copied there from the write-ahead log and synced, not only in the
    /// log, whose commits reach the disk only at a checkpoint.
    func testProgressReadRightBeforeTheUnmountIsInTheDatabaseFileOnceTheDaemonIsGone() throws {
        let library = ArchiveMaker.temporaryDirectory("lib")
        defer { try? FileManager.default.removeItem(at: library) }
        let comic = library.appendingPathComponent("One.cbz")
        try FileManager.default.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), toPath: comic.path)
        let mounted = try MountedLibrary(library: library)
        defer { mounted.unmount() }
        // One page after another as a reader turns them: the last ones wait to be written
        // (reads are coalesced) when the unmount comes.
        for page in 3...6 { _ = try readFile(mounted.path(String(format: "One/%03d.jpg", page))) }
        try mounted.unmountOnceFree()
        XCTAssertEqual(mounted.process.waitForExit(), 0, mounted.logText)
        // immutable=1: the database file alone, its write-ahead log not read.
        let database = mounted.stateHome.appendingPathComponent("inkyfs/state.sqlite").path
        let row = try ArchiveMaker.run("/usr/bin/sqlite3", ["file:\(database)?immutable=1", "SELECT path, last_page, page_count FROM reading"])
        XCTAssertEqual(row.trimmingCharacters(in: .whitespacesAndNewlines), "\(comic.path)|5|12", "page 006 of 12, 0-based")
    }
}

import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// Index, live changes and reading state through a real mount and the command line.
final class MountStateTests: XCTestCase {
    private var state: URL!
    private var library: URL!

    override func setUpWithError() throws {
        state = ArchiveMaker.temporaryDirectory("state")
        library = ArchiveMaker.temporaryDirectory("lib")
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Series"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.fixture("Moon Tales/Moon Tales 02.cbt"), toPath: library.appendingPathComponent("Series/Two.cbt").path)
        try FileManager.default.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), toPath: library.appendingPathComponent("Series/One.cbz").path)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: state)
        try? FileManager.default.removeItem(at: library)
    }

    /// Read while the daemon writes: the sqlite3 shell has no busy timeout of its own, and a
    /// "database is locked" would end the test with a thrown error instead of another look.
    private func indexedPaths() throws -> [String] {
        try ArchiveMaker.run("/usr/bin/sqlite3", ["-cmd", ".timeout 10000", state.appendingPathComponent("state.sqlite").path,
                                                  "SELECT path FROM comic_index ORDER BY path"])
            .split(separator: "\n").map(String.init)
    }

    func testComicsAddedRenamedAndDeletedWhileMountedAreNoticedAndIndexed() throws {
        let mount = try MountedLibrary(library: library, arguments: ["--state", state.path])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Series")).sorted(), ["One", "Two"])
        let added = library.appendingPathComponent("Series/Three.cb7")
        try FileManager.default.copyItem(atPath: Corpus.fixture("Moon Tales/Moon Tales 01.cb7"), toPath: added.path)
        // Without touching the mount: the watcher indexes the new comic within 2 s.
        let deadline = Date().addingTimeInterval(2)
        while !(try indexedPaths()).contains(added.path) && Date() < deadline { usleep(50_000) }
        let indexed = try indexedPaths()
        XCTAssertTrue(indexed.contains(added.path), "indexed in the background: \(indexed)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Series/Three")).count, 10)

        try FileManager.default.moveItem(at: library.appendingPathComponent("Series/One.cbz"), to: library.appendingPathComponent("Series/Uno.cbz"))
        // The kernel keeps the folder's listing until the watcher tells it to forget (~0.3 s).
        let renamed = Date().addingTimeInterval(2)
        while try FileManager.default.contentsOfDirectory(atPath: mount.path("Series")).sorted() != ["Three", "Two", "Uno"] && Date() < renamed {
            usleep(50_000)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Series")).sorted(), ["Three", "Two", "Uno"])
        XCTAssertEqual(try readFile(mount.path("Series/Uno/001.jpg")).count, 37909)
        try FileManager.default.removeItem(at: library.appendingPathComponent("Series/Two.cbt"))
        // The kernel keeps names it was given with their attributes until the watcher says
        // otherwise (~0.3 s debounce).
        let gone = Date().addingTimeInterval(2)
        while FileManager.default.fileExists(atPath: mount.path("Series/Two")) && Date() < gone { usleep(50_000) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Series/Two")))
        while (try indexedPaths()).contains(library.appendingPathComponent("Series/Two.cbt").path) && Date() < gone { usleep(50_000) }
        XCTAssertFalse(try indexedPaths().contains(library.appendingPathComponent("Series/Two.cbt").path), "deleted comics leave the index")
    }

    func testTheLibraryIsListedAheadAfterMountingUnlessToldNot() throws {
        let both = [library.appendingPathComponent("Series/One.cbz").path, library.appendingPathComponent("Series/Two.cbt").path]
        do {
            let mount = try MountedLibrary(library: library, arguments: ["--state", state.path])
            // Nothing under the mount is touched: the daemon lists and indexes on its own.
            let deadline = Date().addingTimeInterval(10)
            while !mount.logText.contains("listed 2 comics ahead") && Date() < deadline { usleep(50_000) }
            XCTAssertTrue(mount.logText.contains("listed 2 comics ahead"), mount.logText)
            while try indexedPaths() != both && Date() < deadline { usleep(50_000) }
            XCTAssertEqual(try indexedPaths(), both)
        }
        try FileManager.default.removeItem(at: state)
        let lazy = try MountedLibrary(library: library, arguments: ["--state", state.path, "-o", "list_ahead=0"])
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: lazy.path("Series/One")).isEmpty)
        // Once the daemon has exited: its log is whole and its index written. (The settings
        // line names --no-list-ahead: what must be missing is a listing pass's line.)
        let log = lazy.wholeLogAfterUnmount()
        XCTAssertFalse(log.contains("comics ahead"), log)
        XCTAssertEqual(try indexedPaths(), [both[0]], "only the comic that was opened")
    }

    func testPagesReadThroughTheMountShowAsProgressAndInContinueReading() throws {
        let mount = try MountedLibrary(library: library, arguments: ["--state", state.path])
        _ = try readFile(mount.path("Series/Two/001.jpg"))
        _ = try readFile(mount.path("Series/Two/002.jpg"))
        _ = try readFile(mount.path("Series/One/004.jpg"))
        _ = try readFile(mount.path("Series/One/005.jpg"))
        let links = try FileManager.default.contentsOfDirectory(atPath: mount.path("Continue Reading")).sorted()
        XCTAssertEqual(links, ["01 - One", "02 - Two"], "most recent first")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: mount.path("Continue Reading/01 - One")), "../Series/One")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Continue Reading/02 - Two")).count, 6, "the link leads to the comic")

        var rows: [[String: Any]] = []
        let written = Date().addingTimeInterval(5)
        repeat {
            let result = try CommandRunner.inkyfs(["progress", "--json", "--state", state.path])
            XCTAssertEqual(result.status, 0, result.stderr)
            rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        } while (rows.count < 2 || rows.first?["page"] as? Int != 5) && Date() < written
        XCTAssertEqual(rows.map { $0["path"] as? String }, [library.appendingPathComponent("Series/One.cbz").path, library.appendingPathComponent("Series/Two.cbt").path])
        XCTAssertEqual(rows.first?["page"] as? Int, 5)
        XCTAssertEqual(rows.first?["pageCount"] as? Int, 12)
        XCTAssertEqual(rows.last?["pagesSeen"] as? Int, 2)

        XCTAssertEqual(try CommandRunner.inkyfs(["bookmark", "add", library.appendingPathComponent("Series/One.cbz").path, "9", "--state", state.path]).status, 0)
        let text = try CommandRunner.inkyfs(["progress", "--state", state.path]).stdout
        XCTAssertTrue(text.contains("page 5 of 12") && text.contains("bookmarks: 9"), text)

        for page in 3...6 { _ = try readFile(mount.path(String(format: "Series/Two/%03d.jpg", page))) }
        // Reading state is written on the daemon's state queue, after the read has been answered.
        var finished = ""
        let deadline = Date().addingTimeInterval(5)
        repeat {
            finished = try CommandRunner.inkyfs(["progress", "--state", state.path]).stdout
        } while finished.contains("Two.cbt") && Date() < deadline
        XCTAssertFalse(finished.contains("Two.cbt"), "reading the last page finishes a comic: \(finished)")
        XCTAssertTrue(try CommandRunner.inkyfs(["progress", "--all", "--state", state.path]).stdout.contains("finished"))
    }

    func testNoProgressRecordsNothingAndHidingContinueReadingWorks() throws {
        let mount = try MountedLibrary(library: library, arguments: ["--state", state.path, "--no-progress", "--no-continue"])
        _ = try readFile(mount.path("Series/Two/001.jpg"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.mountpoint.path), ["Series"])
        XCTAssertTrue(try CommandRunner.inkyfs(["progress", "--all", "--state", state.path]).stdout.contains("nothing read yet"))
    }

    func testADamagedStateDatabaseNeverFailsTheMount() throws {
        try Data(repeating: 0x55, count: 4096).write(to: state.appendingPathComponent("state.sqlite"))
        let mount = try MountedLibrary(library: library, arguments: ["--state", state.path])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Series/Two")).count, 6)
        let deadline = Date().addingTimeInterval(3) // the log arrives through a pipe
        while !mount.logText.contains("moved it to") && Date() < deadline { usleep(50_000) }
        XCTAssertTrue(mount.logText.contains("moved it to"), mount.logText)
    }

    /// `inkyfs mount` in the background with its state (log and database) on `stateHome`;
    /// returns what it printed, and unmounts when the test ends.
    private func backgroundMount(stateHome: String) throws -> (result: CommandRunner.Result, mountpoint: URL) {
        let mountpoint = ArchiveMaker.temporaryDirectory("mnt")
        addTeardownBlock {
            _ = try? ArchiveMaker.run("/usr/bin/fusermount3", ["-u", "-z", mountpoint.path])
            try? FileManager.default.removeItem(at: mountpoint)
        }
        return (try CommandRunner.inkyfs(["mount", library.path, mountpoint.path], environment: ["XDG_STATE_HOME": stateHome]), mountpoint)
    }

    private func pageThree() throws -> [UInt8] {
        let mount = try MountedLibrary(library: library)
        return try readFile(mount.path("Series/Two/003.jpg"))
    }

    /// Serving the library without its index beats refusing to mount: a read-only state folder
    /// costs the log, the index and reading progress, each said on the terminal.
    func testAReadOnlyStateFolderMountsWithoutIndexAndSaysSo() throws {
        let expected = try pageThree()
        let readOnly = try Tmpfs(size: 64 << 10, readOnly: true)
        let (result, mountpoint) = try backgroundMount(stateHome: readOnly.path)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("cannot write the log") && result.stderr.contains("read only"), result.stderr)
        XCTAssertTrue(result.stderr.contains("served without its index and reading progress is not saved"), result.stderr)
        XCTAssertEqual(try readFile(mountpoint.appendingPathComponent("Series/Two/003.jpg").path), expected)
        XCTAssertEqual(try CommandRunner.inkyfs(["unmount", mountpoint.path]).status, 0)
    }

    func testAFullStateFolderMountsWithoutIndexAndSaysSo() throws {
        let expected = try pageThree()
        let full = try Tmpfs(size: 64 << 10)
        try full.fill(leaving: 0)
        let (result, mountpoint) = try backgroundMount(stateHome: full.path)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("database or disk is full"), result.stderr)
        XCTAssertEqual(try readFile(mountpoint.appendingPathComponent("Series/Two/003.jpg").path), expected)
        XCTAssertEqual(try CommandRunner.inkyfs(["unmount", mountpoint.path]).status, 0)
    }

    /// A good database on a disk that filled up is left where it is: moving it aside as
    /// "damaged" would lose the reading progress at the next mount.
    func testAGoodDatabaseOnAFullDiskKeepsItsReadingProgress() throws {
        let disk = try Tmpfs(size: 1 << 20)
        let first = try backgroundMount(stateHome: disk.path)
        XCTAssertEqual(first.result.status, 0, first.result.stderr)
        _ = try readFile(first.mountpoint.appendingPathComponent("Series/Two/001.jpg").path)
        _ = try readFile(first.mountpoint.appendingPathComponent("Series/Two/002.jpg").path)
        XCTAssertEqual(try CommandRunner.inkyfs(["unmount", first.mountpoint.path]).status, 0)
        // The daemon writes its state as it exits, after the unmount returned; wait for it to be
        // gone. Then `progress` is the database's last user, and closing it removes the -wal and
        // -shm files: left behind (`progress` ran beside the exiting daemon, under load), the
        // second mount reused them on the full disk, wrote, and rightly did not warn.
        XCTAssertTrue(waitUntil(10) { MountHolders.of(disk.path).isEmpty }, "\(MountHolders.of(disk.path))")
        let progress = { try CommandRunner.inkyfs(["progress", "--state", disk.path + "/inkyfs"]).stdout }
        let recorded = try progress()
        XCTAssertTrue(recorded.contains("Two"), recorded)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: disk.path + "/inkyfs").filter { $0.hasSuffix("-wal") }, [],
                       "the last user of the database removed its write-ahead log")

        try disk.fill(leaving: 0)
        let second = try backgroundMount(stateHome: disk.path)
        XCTAssertEqual(second.result.status, 0, second.result.stderr)
        XCTAssertTrue(second.result.stderr.contains("is not saved"), second.result.stderr)
        XCTAssertEqual(try readFile(second.mountpoint.appendingPathComponent("Series/One/001.jpg").path).count, 37909)
        XCTAssertEqual(try CommandRunner.inkyfs(["unmount", second.mountpoint.path]).status, 0)
        try FileManager.default.removeItem(at: disk.url.appendingPathComponent(".filler"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: disk.path + "/inkyfs").filter { $0.contains("damaged") }, [])
        XCTAssertEqual(try progress(), recorded, "the reading progress is still there")
    }

    func testALibraryFolderNamedLikeTheVirtualFolderIsAClearError() throws {
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Continue Reading"), withIntermediateDirectories: true)
        let mountpoint = ArchiveMaker.temporaryDirectory("mnt")
        defer { try? FileManager.default.removeItem(at: mountpoint) }
        let result = try CommandRunner.inkyfs(["mount", "--state", state.path, library.path, mountpoint.path])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("Continue Reading") && result.stderr.contains("--continue-name"), result.stderr)
    }
}

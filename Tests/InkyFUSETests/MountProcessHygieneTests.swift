import Foundation
import InkyTestSupport
import XCTest

/// What a mount leaves to others on the machine: its state database is 0600 (reading history),
/// the daemon writes no core file, and a worker holds no descriptor the mounting shell left open;
/// and what a worker can make the daemon do with its listing: nothing the limits forbid.
final class MountProcessHygieneTests: XCTestCase {
    private var library: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("hygiene-lib")
        try ArchiveMaker.zip(at: library.appendingPathComponent("Issue.cbz"), members: [("p1.jpg", try PageImages.make(.jpeg, width: 60, height: 90))])
    }

    override func tearDown() { try? FileManager.default.removeItem(at: library) }

    func testTheStateIsPrivateTheDaemonDumpsNoCoreAndWorkersGetNoStrayDescriptor() throws {
        // The shell that mounts holds fd 251 open without close-on-exec (a pipe there was seen in a worker).
        let launcher = ["/bin/bash", "-c", "exec 251</dev/null; exec \"$0\" \"$@\""]
        let mount = try MountedLibrary(library: library, launcher: launcher)
        let daemon = mount.process.processIdentifier
        XCTAssertNotNil(try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon)/fd/251"), "the daemon was given fd 251")
        XCTAssertFalse(try readFile(mount.path("Issue/001.jpg")).isEmpty)
        XCTAssertTrue(waitUntil(10) { !mount.workerPIDs.isEmpty })
        for worker in mount.workerPIDs {
            let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(worker)/fd").compactMap(Int32.init).sorted()
            XCTAssertFalse(open.contains(251), "worker \(worker) inherited the shell's descriptor: \(open)")
            XCTAssertTrue(open.allSatisfy { $0 < 64 }, "only what it was given (0-3) and opened itself: \(open)")
        }
        let limits = try String(contentsOfFile: "/proc/\(daemon)/limits", encoding: .utf8)
        let core = try XCTUnwrap(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        XCTAssertEqual(core.split(separator: " ", omittingEmptySubsequences: true)[4...5], ["0", "0"], String(core))

        let database = mount.stateHome.appendingPathComponent("inkyfs/state.sqlite").path
        for file in [database, database + "-wal"] where FileManager.default.fileExists(atPath: file) {
            let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            XCTAssertEqual(mode, 0o600, file)
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: database))
        XCTAssertEqual(mount.unmount(), 0)
    }

    /// A worker taken over by a hostile archive sends a page name of 300 bytes and a size past every
    /// limit (`INKYFS_TEST_WORKER_FAULT=hostile-listing:`): the daemon checks the listing again and
    /// shows the comic as unreadable; it neither serves the name nor traps.
    func testAnImpossibleListingFromAWorkerIsRefusedByTheDaemon() throws {
        let mount = try MountedLibrary(library: library, environment: ["INKYFS_TEST_WORKER_FAULT": "hostile-listing:Issue"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Issue")), ["ERROR.txt"])
        let error = String(decoding: try readFile(mount.path("Issue/ERROR.txt")), as: UTF8.self)
        XCTAssertTrue(error.contains("the worker's listing is impossible: page 1's name is not a file name (304 bytes)"), error)
        XCTAssertTrue(mount.isDaemonAlive)
        XCTAssertEqual(mount.unmount(), 0)
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// Lookups and listings in one folder reach the daemon side by side (FUSE_PARALLEL_DIROPS,
/// which the session asks for itself: libfuse 3.14 never does). Without it the kernel holds the
/// folder's lock for every LOOKUP and READDIR in it, and one comic whose archive hangs froze its
/// whole folder until the worker watchdog ended the hang.
final class MountParallelDirectoryTests: XCTestCase {
    /// A tool started and left running: the test waits for its end with a bound.
    private final class Run {
        let process = Process()
        private let output = ArchiveMaker.temporaryDirectory("run").appendingPathComponent("out")

        init(_ tool: String, _ arguments: [String]) throws {
            FileManager.default.createFile(atPath: output.path, contents: nil)
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        func ends(within seconds: Double) -> Bool { waitUntil(seconds) { !process.isRunning } }
        var status: Int32 { process.waitForExit() }
        var text: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
    }

    func testAHangingComicHoldsUpNoOtherLookupOrListingInItsFolder() throws {
        // The watchdog (30 s) well past the bounds below: on a mount without parallel lookups
        // everything else in "Moon Tales" waits for it.
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--worker-timeout", "30", "--no-list-ahead"],
                                       environment: ["INKYFS_TEST_WORKER_FAULT": "hang:Moon Tales 01"])
        XCTAssertTrue(mount.logSays("parallel directory operations: on"), mount.logText)
        // Paths by hand: `mount.path` (URL.appendingPathComponent) stats them, in this process.
        func path(_ relative: String) -> String { mount.mountpoint.path + "/" + relative }
        let hanging = try Run("/usr/bin/stat", [path("Moon Tales/Moon Tales 01/001.jpg")])
        XCTAssertTrue(waitUntil(20) { !mount.workers(withThreadNamed: "inky-hang").isEmpty },
                      "a worker hangs listing Moon Tales 01 for the lookup of it")

        let good = try Run("/usr/bin/ls", ["-l", path("Moon Tales/Moon Tales 02")])
        XCTAssertTrue(good.ends(within: 10), "ls -l of the good comic beside the hanging one returns")
        XCTAssertEqual(good.status, 0)
        XCTAssertEqual(good.text.split(separator: "\n").filter { $0.hasPrefix("-r") }.count, 6, good.text)
        let folder = try Run("/usr/bin/ls", [path("Moon Tales")])
        XCTAssertTrue(folder.ends(within: 10), "ls of the folder returns")
        XCTAssertEqual(folder.text, "Moon Tales 01\nMoon Tales 02\n")
        XCTAssertTrue(hanging.process.isRunning, "all that while the stat of the hanging comic's page waited")

        // The watchdog ends the hang: the comic shows ERROR.txt only, the mount is healthy.
        XCTAssertTrue(hanging.ends(within: 60), "the watchdog ends the hanging lookup")
        XCTAssertNotEqual(hanging.status, 0, "no page 001.jpg in a comic that shows ERROR.txt")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: path("Moon Tales/Moon Tales 01")), ["ERROR.txt"])
        XCTAssertTrue(mount.isDaemonAlive)
        XCTAssertEqual(mount.unmount(), 0)
        XCTAssertFalse(MountedLibrary.isMounted(mount.mountpoint.path))
    }
}

import Foundation
import InkyArchive
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
        private let output = ArchiveMaker.temporaryDirectory("run", removedAtExit: true).appendingPathComponent("out")

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
        // The watchdog (20 s) ends the hang well after the 10 s bounds below (what they wait for
        // takes under 2 s loaded), so a good ls that waited for it fails its bound: on a mount
        // without parallel lookups everything else in "Moon Tales" waits for it.
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--worker-timeout", "20", "--no-list-ahead"],
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

    /// Finds, listings and stats of the same and of different comics of one folder, all at once
    /// on a cold mount (listing ahead racing them), each get the whole answer; the mount stays up.
    func testManyLookupsAndListingsAtOnceInOneFolderGetCompleteAnswers() throws {
        let library = ArchiveMaker.temporaryDirectory("parallel-library", removedAtExit: true)
        let series = library.appendingPathComponent("Series")
        try FileManager.default.createDirectory(at: series, withIntermediateDirectories: true)
        let issues = (1...8).map { String(format: "Issue %02d", $0) }
        var sizes: [String: Int] = [:]
        for (number, issue) in issues.enumerated() {
            let pages = (1...12).map { page in
                (String(format: "%03d.jpg", page), ArchiveMaker.noise(count: 300 + 7 * page + number, seed: UInt64(number * 100 + page)))
            }
            for (name, bytes) in pages { sizes["\(issue)/\(name)"] = bytes.count }
            try ArchiveMaker.zip(at: series.appendingPathComponent(issue + ".cbz"), members: pages)
        }
        let mount = try MountedLibrary(library: library)
        let root = mount.mountpoint.path + "/Series"
        let expectedFind = sizes.keys.map { "\(root)/\($0) \(sizes[$0]!)" }.sorted()

        let finds = try (0..<4).map { _ in try Run("/usr/bin/find", [root, "-type", "f", "-printf", "%p %s\\n"]) }
        let listings = try issues.flatMap { issue in try (0..<2).map { _ in try Run("/usr/bin/ls", ["-l", "\(root)/\(issue)"]) } }
        let stats = try (0..<6).map { _ in try Run("/usr/bin/stat", ["-c", "%s", "\(root)/Issue 03/005.jpg"]) }
        let folders = try (0..<3).map { _ in try Run("/usr/bin/ls", ["-lR", root]) }
        for run in finds + listings + stats + folders { XCTAssertTrue(run.ends(within: 60), "\(run.process.arguments ?? [])") }

        for find in finds {
            XCTAssertEqual(find.status, 0)
            XCTAssertEqual(find.text.split(separator: "\n").map(String.init).sorted(), expectedFind)
        }
        for (index, listing) in listings.enumerated() {
            let issue = issues[index / 2]
            XCTAssertEqual(listing.status, 0)
            let listed = listing.text.split(separator: "\n").filter { $0.hasPrefix("-r") }.map { line in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                return "\(issue)/\(fields.last!) \(fields[4])"
            }
            XCTAssertEqual(listed, (1...12).map { "\(issue)/" + String(format: "%03d.jpg", $0) }.map { "\($0) \(sizes[$0]!)" })
        }
        for stat in stats { XCTAssertEqual(stat.text, "\(sizes["Issue 03/005.jpg"]!)\n") }
        for folder in folders {
            XCTAssertEqual(folder.status, 0)
            XCTAssertEqual(folder.text.split(separator: "\n").count { $0.hasPrefix("-r") }, issues.count * 12, folder.text)
        }
        XCTAssertTrue(mount.isDaemonAlive)
        XCTAssertEqual(mount.unmount(), 0)
        XCTAssertFalse(MountedLibrary.isMounted(mount.mountpoint.path))
    }

    /// The same in `Vault/`: its folders and comics are numbered in memory as they are looked up.
    func testManyLookupsAndListingsAtOnceInTheVaultGetCompleteAnswers() throws {
        let fixture = try VaultMountFixture()
        try fixture.unlock()
        let comic = fixture.mount.mountpoint.path + "/Vault/Secret Series/Moon Tales 01"
        let pages = try ComicOpener.open(Corpus.fixture("Moon Tales/Moon Tales 01.cb7")).listing.pages.map(\.name).sorted()
        let finds = try (0..<4).map { _ in try Run("/usr/bin/find", [fixture.mount.mountpoint.path + "/Vault", "-type", "f"]) }
        let listings = try (0..<4).map { _ in try Run("/usr/bin/ls", [comic]) }
        for run in finds + listings { XCTAssertTrue(run.ends(within: 60), "\(run.process.arguments ?? [])") }
        for find in finds {
            XCTAssertEqual(find.status, 0)
            XCTAssertEqual(find.text.split(separator: "\n").map(String.init).sorted(), pages.map { "\(comic)/\($0)" })
        }
        for listing in listings { XCTAssertEqual(listing.text.split(separator: "\n").map(String.init), pages) }
        XCTAssertTrue(fixture.mount.isDaemonAlive)
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// A worker taken over by a hostile archive, simulated by injecting calls into a real worker of
/// a real mount with gdb (the tests run as root: the worker of a root mount): it opens no file of
/// its library (the daemon passes it each comic open), nor `/etc/shadow`, a file outside the
/// library, or the daemon's memory.
final class MountWorkerConfinementTests: XCTestCase {
    private var library: URL!
    private var outside: URL!

    override func setUpWithError() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb"), "needs gdb")
        library = ArchiveMaker.temporaryDirectory("confine-lib")
        outside = ArchiveMaker.temporaryDirectory("confine-outside")
        try ArchiveMaker.zip(at: library.appendingPathComponent("Issue.cbz"), members: [("p1.jpg", try PageImages.make(.jpeg, width: 60, height: 90))])
        try "private notes\n".write(to: outside.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
    }

    // Nil when setUp skipped (no gdb): unwrapping them then would crash the whole run.
    override func tearDown() {
        if let library { try? FileManager.default.removeItem(at: library) }
        if let outside { try? FileManager.default.removeItem(at: outside) }
    }

    /// `open(path, O_RDONLY)` called inside `pid` by gdb: the descriptor, or -errno.
    private func openInside(_ pid: Int32, _ paths: [String]) throws -> [Int] {
        var commands: [String] = []
        for path in paths {
            commands += ["-ex", "print ((int (*)(const char *, int))open)(\"\(path)\", 0)",
                         "-ex", "print *((int *(*)(void))__errno_location)()"]
        }
        let result = try CommandRunner.capture("/usr/bin/gdb", ["-nx", "-batch", "-p", String(pid)] + commands)
        let values = result.stdout.split(separator: "\n").filter { $0.hasPrefix("$") }
            .compactMap { $0.split(separator: "=").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
        XCTAssertEqual(values.count, paths.count * 2, result.stdout + result.stderr)
        return stride(from: 0, to: values.count - 1, by: 2).map { values[$0] >= 0 ? values[$0] : -values[$0 + 1] }
    }

    func testAHijackedWorkerOpensNeitherItsLibraryNorAnythingElse() throws {
        let mount = try MountedLibrary(library: library)
        XCTAssertFalse(try readFile(mount.path("Issue/001.jpg")).isEmpty)
        XCTAssertTrue(waitUntil(10) { !mount.workerPIDs.isEmpty })
        let worker = try XCTUnwrap(mount.workerPIDs.first)
        let results = try openInside(worker, [library.appendingPathComponent("Issue.cbz").path, "/etc/shadow",
                                              outside.appendingPathComponent("notes.txt").path,
                                              "/proc/\(mount.process.processIdentifier)/mem"])
        // The comic is 0644 in a 0755 folder: nobody's own rights would open it; Landlock does not.
        XCTAssertEqual(results, [-Int(EACCES), -Int(EACCES), -Int(EACCES), -Int(EACCES)],
                       "the comic it just read, /etc/shadow, a file outside the library, the daemon's memory: \(results)")
        XCTAssertTrue(mount.isDaemonAlive)
        XCTAssertEqual(mount.unmount(), 0)
    }
}

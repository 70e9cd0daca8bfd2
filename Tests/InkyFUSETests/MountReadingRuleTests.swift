import Foundation
import InkyTestSupport
import XCTest

/// Reading recorded, not reads, through a real mount and real programs: a thumbnailer (a program
/// named `tumblerd`, `evince-thumbnailer`), `file`, `cp`, `head -c` and a one-off `cat` record
/// nothing; paging through with `cat`, one page after another, records the comic and finishes it.
final class MountReadingRuleTests: XCTestCase {
    private var state: URL!
    private var scratch: URL!

    override func setUp() {
        state = ArchiveMaker.temporaryDirectory("rule-state")
        scratch = ArchiveMaker.temporaryDirectory("rule-scratch")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: state)
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Every comic with reading state, finished ones too, after `Continue Reading/` was listed
    /// (which writes the reads still pending): "PATH page/pageCount pagesSeen finished".
    private func progress(_ mount: MountedLibrary) throws -> [String] {
        _ = try FileManager.default.contentsOfDirectory(atPath: mount.path("Continue Reading"))
        let result = try CommandRunner.inkyfs(["progress", "--all", "--json", "--state", state.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        return rows.map { row in
            let path = (row["path"] as? String ?? "").replacingOccurrences(of: mount.library.path + "/", with: "")
            return "\(path) \(row["page"] ?? "")/\(row["pageCount"] ?? "") \(row["pagesSeen"] ?? "") \(row["finished"] as? Bool == true ? "finished" : "reading")"
        }
    }

    /// Runs `command` in a shell with `$0` the comic's folder under the mount.
    @discardableResult
    private func shell(_ command: String, in folder: String) throws -> String {
        let result = try CommandRunner.capture("/bin/sh", ["-c", command, folder])
        XCTAssertEqual(result.status, 0, "\(command): \(result.stderr)")
        return result.stdout
    }

    func testThumbnailersFileAndCopiesRecordNothingAndPagingThroughFinishes() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--state", state.path])
        let comic = mount.path("Space Patrol/Space Patrol 001")
        // Programs named as thumbnailers: the kernel names a process by the file it was started from.
        let tumbler = scratch.appendingPathComponent("tumblerd").path
        try FileManager.default.copyItem(atPath: "/bin/cat", toPath: tumbler)
        let evince = scratch.appendingPathComponent("evince-thumbnailer").path
        try FileManager.default.createSymbolicLink(atPath: evince, withDestinationPath: "/bin/cat")
        let bytes = try shell("\"\(tumbler)\" \"$0\"/* | wc -c", in: comic)
        XCTAssertGreaterThan(Int(bytes.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 400_000, "every page read whole")
        try shell("for page in \"$0\"/*; do \"\(evince)\" \"$page\" >/dev/null; done", in: comic)
        try shell("file \"$0\"/* >/dev/null", in: comic)
        try shell("cp \"$0\"/* \"\(scratch.path)\"", in: comic)
        XCTAssertEqual(try progress(mount), [], "thumbnailers, file and cp read every page: none of it is reading")

        // A person paging through, after all of that was read (and kept by the kernel) for them.
        try shell("for page in \"$0\"/*; do cat \"$page\" >/dev/null; done", in: comic)
        XCTAssertEqual(try progress(mount), ["Space Patrol/Space Patrol 001.cbz 12/12 12 finished"])
    }

    func testAHeadAndTheLastPageAloneRecordNothing() throws {
        // Pages of 1 MiB: for a `head -c` the kernel reads ahead from the start of one, not all of it.
        let library = ArchiveMaker.temporaryDirectory("rule-library")
        defer { try? FileManager.default.removeItem(at: library) }
        let pages = (1...8).map { (String(format: "%03d.jpg", $0), ArchiveMaker.noise(count: 1 << 20, seed: UInt64($0))) }
        try ArchiveMaker.zip(at: library.appendingPathComponent("Big.cbz"), members: pages)
        let mount = try MountedLibrary(library: library, arguments: ["--state", state.path])
        let comic = mount.path("Big")

        try shell("for page in \"$0\"/*; do head -c 100 \"$page\" >/dev/null; done", in: comic)
        XCTAssertEqual(try progress(mount), [], "the start of every page is not reading")
        try shell("cat \"$0\"/008.jpg >/dev/null", in: comic)
        XCTAssertEqual(try progress(mount), [], "the last page alone is a one-off, not a finished comic")
        try shell("cat \"$0\"/001.jpg >/dev/null", in: comic)
        XCTAssertEqual(try progress(mount), ["Big.cbz 1/8 2 reading"], "two pages: being read; the last one touched, not finished")
        try shell("for page in 2 3 4; do cat \"$0\"/00$page.jpg >/dev/null; done", in: comic)
        XCTAssertEqual(try progress(mount), ["Big.cbz 4/8 5 reading"], "the last page seen, but 5 of 8 pages")
        try shell("cat \"$0\"/005.jpg >/dev/null", in: comic)
        XCTAssertEqual(try progress(mount), ["Big.cbz 5/8 6 finished"], "the last page and three quarters of them: read through")
    }

    /// With `-o allow_other`, another user paging through a comic leaves the mounting user's
    /// state as it was; the mounting user reading it after them is recorded.
    func testAnotherUsersReadsAreNotTheMountingUsers() throws {
        guard let user = try TestUser.make() else { throw XCTSkip("needs root to make a second user") }
        defer { user.remove() }
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--state", state.path, "-o", "allow_other"])
        let comic = mount.path("Moon Tales/Moon Tales 02")
        // Right after mounting, a second user's first lookups can be refused for a moment: wait until they list.
        XCTAssertTrue(waitUntil(10) { (try? user.run("/bin/ls", [comic]).status) == 0 }, mount.logText)
        let read = try user.shell("for page in \"\(comic)\"/*.jpg; do cat \"$page\" >/dev/null || exit 1; done; echo read")
        XCTAssertEqual(read.stdout, "read\n", read.stderr)
        XCTAssertEqual(try progress(mount), [], "the other user's reading is not the mounting user's")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Continue Reading")), [])

        try shell("for page in \"$0\"/*.jpg; do cat \"$page\" >/dev/null; done", in: comic)
        XCTAssertEqual(try progress(mount), ["Moon Tales/Moon Tales 02.cbt 6/6 6 finished"])
    }
}

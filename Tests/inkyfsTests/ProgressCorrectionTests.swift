import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs progress forget/set` correct the reading state by hand, and a page past a comic's
/// last is refused for progress and bookmarks alike.
final class ProgressCorrectionTests: XCTestCase {
    private var folder: URL!
    private var comic: String { folder.appendingPathComponent("library/Moon Tales 01.cb7").path }

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("progress-fix")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("library"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.fixture("Moon Tales/Moon Tales 01.cb7"), toPath: comic)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func inkyfs(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(arguments + ["--state", folder.appendingPathComponent("state").path])
    }

    func testSetAndForgetTheProgressOfOneComic() throws {
        let unknown = try inkyfs(["progress", "set", comic, "3"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertEqual(unknown.stderr, "inkyfs: \(comic): its page count is not known yet; list it once (open it through a mount, "
                       + "or run: inkyfs index LIBRARY)\n")
        XCTAssertEqual(try inkyfs(["index", folder.appendingPathComponent("library").path]).status, 0)

        let set = try inkyfs(["progress", "set", comic, "3"])
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertEqual(set.stdout, "\(comic): page 3 of 10\n")
        let listed = try inkyfs(["progress"])
        XCTAssertTrue(listed.stdout.contains("page 3 of 10  30%") && listed.stdout.contains(comic), listed.stdout)

        let past = try inkyfs(["progress", "set", comic, "11"])
        XCTAssertEqual(past.status, 2)
        XCTAssertEqual(past.stderr, "inkyfs: \(comic) has 10 pages: there is no page 11\n")
        let mark = try inkyfs(["bookmark", "add", comic, "11"])
        XCTAssertEqual(mark.status, 2)
        XCTAssertEqual(mark.stderr, "inkyfs: \(comic) has 10 pages: there is no page 11\n")
        XCTAssertEqual(try inkyfs(["bookmark", "add", comic, "10"]).status, 0, "the last page is a page")

        let last = try inkyfs(["progress", "set", comic, "10"])
        XCTAssertEqual(last.status, 0, last.stderr)
        XCTAssertEqual(try inkyfs(["progress"]).stdout, "nothing in progress (--all shows finished comics)\n", "at its last page it is finished")

        let forgot = try inkyfs(["progress", "forget", comic])
        XCTAssertEqual(forgot.status, 0, forgot.stderr)
        XCTAssertEqual(try inkyfs(["progress", "--all"]).stdout, "nothing read yet\n")
        XCTAssertEqual(try inkyfs(["bookmark", "list", comic]).stdout, "\(comic): 10\n", "its bookmarks stay")
        let again = try inkyfs(["progress", "forget", comic])
        XCTAssertEqual(again.status, 1)
        XCTAssertEqual(again.stderr, "inkyfs: \(comic): no reading progress to forget\n")
    }

    /// A comic no longer where it was read (its library removed, or a disk unplugged) is left out
    /// of the list and counted, listed by --missing, and forgotten only when asked.
    func testComicsNoLongerFoundAreCountedListedAndForgottenOnRequest() throws {
        XCTAssertEqual(try inkyfs(["index", folder.appendingPathComponent("library").path]).status, 0)
        XCTAssertEqual(try inkyfs(["progress", "set", comic, "4"]).status, 0)
        XCTAssertEqual(try inkyfs(["progress", "--missing"]).stdout, "every comic read is where it was read\n")
        let moved = folder.appendingPathComponent("elsewhere.cb7").path
        try FileManager.default.moveItem(atPath: comic, toPath: moved)

        let listed = try inkyfs(["progress"])
        XCTAssertEqual(listed.status, 0)
        XCTAssertEqual(listed.stdout, "nothing in progress (--all shows finished comics)\n")
        XCTAssertEqual(listed.stderr, "inkyfs: not listed: 1 comic no longer where read (a library moved, removed or not mounted); "
                       + "inkyfs progress --missing lists, inkyfs progress forget --missing forgets\n")
        let json = try inkyfs(["progress", "--json"])
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [Any])?.count, 0, json.stdout)
        let missing = try inkyfs(["progress", "--missing"])
        XCTAssertTrue(missing.stdout.hasSuffix("page 4 of 10  40%     \(comic)\n"), missing.stdout)
        XCTAssertEqual(missing.stderr, "")

        // Back where it was, it is listed again: nothing was forgotten by listing.
        try FileManager.default.moveItem(atPath: moved, toPath: comic)
        XCTAssertTrue(try inkyfs(["progress"]).stdout.contains("page 4 of 10"))
        try FileManager.default.moveItem(atPath: comic, toPath: moved)

        XCTAssertEqual(try inkyfs(["progress", "forget", "--missing", comic]).status, 64, "forget --missing names no comic")
        let forgot = try inkyfs(["progress", "forget", "--missing"])
        XCTAssertEqual(forgot.status, 0, forgot.stderr)
        XCTAssertEqual(forgot.stdout, "forgot where you were in 1 comic not found:\n  \(comic)\n")
        XCTAssertEqual(try inkyfs(["progress", "--all"]).stdout, "nothing read yet\n")
        XCTAssertEqual(try inkyfs(["progress", "forget", "--missing"]).stdout, "every comic read is where it was read: nothing forgotten\n")
    }
}

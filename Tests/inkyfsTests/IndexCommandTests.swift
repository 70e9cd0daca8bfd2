import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs index` run again says which comics are still broken: an unchanged comic that failed
/// is counted as failed again (and as unchanged: nothing was listed anew), never hidden.
final class IndexCommandTests: XCTestCase {
    func testARerunNamesTheComicsThatAreStillBroken() throws {
        let folder = ArchiveMaker.temporaryDirectory("index-rerun")
        defer { try? FileManager.default.removeItem(at: folder) }
        let library = folder.appendingPathComponent("Library")
        try FileManager.default.copyItem(at: Corpus.fixtures.appendingPathComponent("Broken"), to: library)
        let state = folder.appendingPathComponent("state").path
        let first = try CommandRunner.inkyfs(["index", library.path, "--state", state])
        let again = try CommandRunner.inkyfs(["index", library.path, "--state", state])
        for (run, result) in [("first", first), ("again", again)] {
            let failed = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  failed: ") }
            XCTAssertEqual(failed.count, 2, "\(run):\n\(result.stdout)")
            XCTAssertTrue(failed.contains { $0.contains("Not A Comic.cbr") }, "\(run):\n\(result.stdout)")
        }
        XCTAssertTrue(again.stdout.contains(": 0 listed, 3 unchanged, 2 failed"), again.stdout)
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// Reading a long comic whole records every page it read: reads are written to the state
/// database coalesced (at most four writes a second while pages are read), and none is lost.
final class MountReadingTrackerTests: XCTestCase {
    func testEveryPageOfALongComicReadWholeIsRecorded() throws {
        let library = ArchiveMaker.temporaryDirectory("tracker")
        let state = ArchiveMaker.temporaryDirectory("tracker-state")
        defer {
            try? FileManager.default.removeItem(at: library)
            try? FileManager.default.removeItem(at: state)
        }
        let count = 1_500
        try GeneratedComic.write(GeneratedComic.sequence(count, padding: .unpadded, seed: 9), as: .zipStored,
                                 to: library.appendingPathComponent("Long.cbz"))
        let mount = try MountedLibrary(library: library, arguments: ["--state", state.path])
        let pages = try FileManager.default.contentsOfDirectory(atPath: mount.path("Long")).sorted()
        XCTAssertEqual(pages.count, count)
        let read = try CommandRunner.capture("/bin/sh", ["-c", "cat \"$0\"/* | wc -l", mount.path("Long")])
        XCTAssertEqual(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines), String(count))
        var row: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(10)
        repeat {
            let result = try CommandRunner.inkyfs(["progress", "--json", "--all", "--state", state.path])
            row = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])?.first ?? [:]
        } while row["pagesSeen"] as? Int != count && Date() < deadline
        XCTAssertEqual(row["pagesSeen"] as? Int, count, "\(row)")
        XCTAssertEqual(row["page"] as? Int, count, "the last page read is where the reader stands")
        XCTAssertTrue(mount.isDaemonAlive)
    }
}

import Foundation
import InkyTestSupport
import XCTest
@testable import InkyLibrary

/// The cover folder holds only what the cap counts: a daemon that ended mid-write leaves a
/// temporary file no cap sees, so the next store sweeps those of writers that are gone (and the
/// `.dat.nosync…` files older versions' Foundation writes left), and a daemon's end lets the
/// write under way finish and starts none.
final class CoverCacheFilesTests: XCTestCase {
    private let folder = ArchiveMaker.temporaryDirectory("cover-files")

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func names() throws -> Set<String> { Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)) }

    /// The pid of a process that has ended and been reaped.
    private func endedPID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    func testTheFirstStoreSweepsTemporaryFilesOfEndedWritersOnly() throws {
        let ended = ".\(String(repeating: "a", count: 32)).jpg.\(try endedPID()).tmp"
        let running = ".\(String(repeating: "b", count: 32)).jpg.\(getpid()).tmp"
        for name in [ended, running, ".dat.nosyncAB12", ".hidden", "notes.txt"] {
            try Data(repeating: 7, count: 1000).write(to: folder.appendingPathComponent(name))
        }
        let covers = CoverCache(directory: folder.path, capacity: 1 << 20)
        covers.store("c.jpg", Array(repeating: 1, count: 500))
        XCTAssertEqual(try names(), [running, ".hidden", "notes.txt", "c.jpg"])
        XCTAssertEqual(covers.cover("c.jpg"), Array(repeating: 1, count: 500))
        XCTAssertEqual(covers.size, 500, "only covers count against the cap")
    }

    func testNothingIsStoredOnceWritesAreFinished() throws {
        let covers = CoverCache(directory: folder.path, capacity: 1 << 20)
        covers.store("before.jpg", [1, 2, 3])
        covers.finishWrites()
        covers.store("after.jpg", [4, 5, 6])
        XCTAssertEqual(try names(), ["before.jpg"])
    }
}

import Foundation
import InkyCore
import XCTest
@testable import InkyStore

/// Library paths keep their numbers across opens of the database; new paths get new ones.
final class NodeNumbersTests: XCTestCase {
    func testPathsKeepTheirNumbersAcrossOpensAndNewPathsGetNewOnes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("numbers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("state.sqlite").path
        let a = LibraryFile(path: "/lib/A"), b = LibraryFile(path: "/lib/A/b.cbz"), c = LibraryFile(path: "/lib/C")
        let first = try XCTUnwrap(StateDatabase.open(at: path).nodeNumbers([a, b, a]))
        XCTAssertEqual(first.count, 2)
        XCTAssertNotEqual(first[a], first[b])

        let reopened = StateDatabase.open(at: path)
        let second = try XCTUnwrap(reopened.nodeNumbers([c, b, a]))
        XCTAssertEqual(second[a], first[a])
        XCTAssertEqual(second[b], first[b])
        XCTAssertFalse([first[a], first[b]].contains(second[c]), "a new path, a new number")
        XCTAssertEqual(reopened.nodePath(try XCTUnwrap(second[c])), c)
        XCTAssertNil(reopened.nodePath(99_999))
    }

    /// Two mounts' databases (or two threads) numbering the same new paths at once: a path the
    /// other numbered between the read and the insert is found, never left without a number.
    func testPathsNumberedMeanwhileElsewhereAreFoundWithTheSameNumber() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("numbers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("state.sqlite").path
        let files = (0..<400).map { LibraryFile(path: "/lib/S/\($0).cbz") }
        let databases = [StateDatabase.open(at: path), StateDatabase.open(at: path)]
        let results = NumbersByDatabase()
        DispatchQueue.concurrentPerform(iterations: 2) { which in
            // Each goes through the paths in its own order, a few at a time: they meet in the middle.
            let order = which == 0 ? files : files.reversed()
            for start in stride(from: 0, to: order.count, by: 8) {
                let chunk = Array(order[start..<min(start + 8, order.count)])
                results.add(which, databases[which].nodeNumbers(chunk) ?? [:])
            }
        }
        let (first, second) = results.both
        XCTAssertEqual(first.count, files.count, "every path numbered")
        XCTAssertEqual(first, second, "one number a path, whoever asked")
        XCTAssertEqual(Set(first.values).count, files.count, "no number given twice")
    }
}

private final class NumbersByDatabase: @unchecked Sendable {
    private let lock = NSLock()
    private var numbers: [[LibraryFile: UInt32]] = [[:], [:]]
    func add(_ which: Int, _ some: [LibraryFile: UInt32]) { lock.withLock { numbers[which].merge(some) { a, _ in a } } }
    var both: ([LibraryFile: UInt32], [LibraryFile: UInt32]) { lock.withLock { (numbers[0], numbers[1]) } }
}

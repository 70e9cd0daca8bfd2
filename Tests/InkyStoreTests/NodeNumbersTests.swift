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
}

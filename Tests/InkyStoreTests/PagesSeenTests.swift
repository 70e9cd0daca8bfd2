import Foundation
import InkyCore
import XCTest
@testable import InkyStore

/// The `pages_seen` column is read and written without JSONDecoder/JSONEncoder on every read,
/// and stays exactly what they wrote and read.
final class PagesSeenTests: XCTestCase {
    func testTheTextIsExactlyWhatJSONEncoderWrites() throws {
        var generator = SystemRandomNumberGenerator()
        for count in [0, 1, 2, 17, 1_000] {
            let pages = Set((0..<count).map { _ in Int.random(in: 0..<20_000, using: &generator) })
            var seen = PagesSeen()
            for page in pages.shuffled() + pages.shuffled() { seen.insert(page) }
            let expected = String(decoding: try JSONEncoder().encode(pages.sorted()), as: UTF8.self)
            XCTAssertEqual(seen.json, expected)
            XCTAssertEqual(PagesSeen(json: expected).pages, pages.sorted())
        }
    }

    func testOtherTextIsReadAsJSON() {
        XCTAssertEqual(PagesSeen(json: "[ 3, 1,\n2 ]").pages, [1, 2, 3])
        XCTAssertEqual(PagesSeen(json: "[5,5,1]").pages, [1, 5], "unsorted or repeated: made sorted and unique")
        XCTAssertEqual(PagesSeen(json: "[1,,2]").pages, [])
        XCTAssertEqual(PagesSeen(json: "[99999999999999999999]").pages, [])
        XCTAssertEqual(PagesSeen(json: "not json").pages, [])
    }

    /// Pages recorded together count as read one by one: all seen, the last one is where the reader stands.
    func testReadsRecordedTogether() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pages-seen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = StateDatabase.open(at: folder.appendingPathComponent("state.sqlite").path)
        let comic = LibraryFile(path: "/lib/a.cbz")
        state.recordRead(comic, page: 7, pageCount: 10)
        state.recordReads(comic, pages: [0, 1, 2], pageCount: 10)
        let row = try XCTUnwrap(state.progress().first)
        XCTAssertEqual(row.pagesSeen, [0, 1, 2, 7])
        XCTAssertEqual(row.lastPage, 2)
    }
}

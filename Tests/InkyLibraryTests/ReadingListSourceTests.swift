import Foundation
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyLibrary

/// The reading lists of `--reading-lists` are walked for every 10 s; a list is parsed again only
/// when its file changed, and one that changed is never shown as it was.
final class ReadingListSourceTests: XCTestCase {
    func testAListIsParsedAgainOnlyWhenItsFileChanged() throws {
        let library = ArchiveMaker.temporaryDirectory("lists-library")
        let directory = ArchiveMaker.temporaryDirectory("lists")
        defer { [library, directory].forEach { try? FileManager.default.removeItem(at: $0) } }
        func write(_ name: String, listing series: [String]) throws {
            let books = series.map { "<Book Series=\"\($0)\" Number=\"1\" Volume=\"2020\" Year=\"2020\"/>" }.joined()
            try Data("<ReadingList><Name>\(name)</Name><Books>\(books)</Books></ReadingList>".utf8)
                .write(to: directory.appendingPathComponent("\(name).cbl"))
        }
        try write("Owls", listing: ["Batman", "Nightwing"])
        try write("Saga", listing: ["Saga"])
        // Walked at every call: the test stands for many 10 s periods.
        let source = ReadingListSource(library: LibraryRoot(path: library.path), directory: directory.path, directoryInterval: 0)
        func shown() -> [String: [String]] {
            Dictionary(uniqueKeysWithValues: source.current().lists.map { ($0.name, $0.list.books.map(\.series)) })
        }
        XCTAssertEqual(shown(), ["Owls": ["Batman", "Nightwing"], "Saga": ["Saga"]])
        XCTAssertEqual(source.parses.load(ordering: .relaxed), 2)
        for _ in 0 ..< 5 { XCTAssertEqual(shown().count, 2) }
        XCTAssertEqual(source.parses.load(ordering: .relaxed), 2, "unchanged lists are not read again")

        try write("Owls", listing: ["Batman", "Robin", "Nightwing"])
        XCTAssertEqual(shown()["Owls"], ["Batman", "Robin", "Nightwing"], "a changed list is read again at once")
        XCTAssertEqual(source.parses.load(ordering: .relaxed), 3)
        try FileManager.default.removeItem(at: directory.appendingPathComponent("Saga.cbl"))
        XCTAssertEqual(shown().keys.sorted(), ["Owls"])
        try write("Saga", listing: ["Saga", "Paper Girls"])
        XCTAssertEqual(shown()["Saga"], ["Saga", "Paper Girls"], "a list gone and back is read again, not taken from before")
        XCTAssertEqual(source.parses.load(ordering: .relaxed), 4)
    }
}

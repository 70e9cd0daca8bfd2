import XCTest
@testable import InkyCore

/// File-name metadata, issue-number order and the names views make of metadata.
final class ComicNamingTests: XCTestCase {
    func testFileNamesAreReadAsTaggersReadThem() {
        func parsed(_ name: String) -> [String?] {
            let metadata = FileNameMetadata.parse(name)
            return [metadata.series, metadata.number, metadata.volume.map(String.init), metadata.year.map(String.init)]
        }
        XCTAssertEqual(parsed("Series Name v2 #012 (2019).cbz"), ["Series Name", "12", "2", "2019"])
        XCTAssertEqual(parsed("Batman 001 (2011) (Digital) (Zone-Empire).cbr"), ["Batman", "1", nil, "2011"])
        XCTAssertEqual(parsed("Batman_Annual_01_(2012).cbz"), ["Batman Annual", "1", nil, "2012"])
        XCTAssertEqual(parsed("100 Bullets 001.cbz"), ["100 Bullets", "1", nil, nil])
        XCTAssertEqual(parsed("Saga Vol. 3 018.cbz"), ["Saga", "18", "3", nil])
        XCTAssertEqual(parsed("Hellboy - Seed of Destruction 1.5.cb7"), ["Hellboy - Seed of Destruction", "1.5", nil, nil])
        XCTAssertEqual(parsed("Watchmen.cbz"), ["Watchmen", nil, nil, nil])
        XCTAssertEqual(parsed("[Group] (2001).cbz"), ["[Group] (2001)", nil, nil, "2001"])
    }

    func testIssueNumbersSortNumberedFirstThenNaturally() {
        let numbers = ["Annual 10", "10", "2", "∞", "1.5", "Annual 1", "1", "-1", "½", "1a", "Annual 2", "0"]
        XCTAssertEqual(numbers.shuffled().map(IssueNumber.init).sorted().map(\.text),
                       ["-1", "0", "½", "1", "1a", "1.5", "2", "10", "Annual 1", "Annual 2", "Annual 10", "∞"])
    }

    func testPaddingIsDroppedFromNumbers() {
        XCTAssertEqual(["012", "001.5", "000", "0.5", "-01", "7", "07a", "Annual 1"].map(IssueNumber.normalized),
                       ["12", "1.5", "0", "0.5", "-1", "7", "7a", "Annual 1"])
    }

    func testSafeNamesAreOneHarmlessComponent() {
        XCTAssertEqual(SafeName.make("AC/DC"), "AC-DC")
        XCTAssertEqual(SafeName.make("../../etc/passwd"), "..-..-etc-passwd")
        XCTAssertNil(SafeName.make(".."))
        XCTAssertNil(SafeName.make("."))
        XCTAssertNil(SafeName.make(" \u{0}\n\t "))
        XCTAssertEqual(SafeName.make("a\u{0}b\nc\u{202E}d"), "a b c d")
        let long = SafeName.make(String(repeating: "é", count: 10_000))
        XCTAssertLessThanOrEqual(long?.utf8.count ?? 999, SafeName.maxBytes)
        XCTAssertEqual(long?.last, "…")
        XCTAssertEqual(SafeName.make("👩‍👩‍👧 \\ x"), "👩‍👩‍👧 - x")
    }
}

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

    /// A name that says no series (a number, `Issue 12`, `#12`, `Chapter 3`) takes its folder's:
    /// its series, volume and year, numbers in the folder's name kept as part of the series.
    func testANameWithoutASeriesTakesItsFolders() {
        func parsed(_ name: String, in folder: String?) -> [String?] {
            let metadata = FileNameMetadata.parse(name, folder: folder)
            return [metadata.series, metadata.number, metadata.volume.map(String.init), metadata.year.map(String.init)]
        }
        XCTAssertEqual(parsed("Issue 001.cbz", in: "Batman (2016)"), ["Batman", "1", nil, "2016"])
        XCTAssertEqual(parsed("001.cbz", in: "Saga v2"), ["Saga", "1", "2", nil])
        XCTAssertEqual(parsed("#12 (2019).cbr", in: "Series 0002"), ["Series 0002", "12", nil, "2019"])
        XCTAssertEqual(parsed("Chapter 3.cb7", in: "2000 AD"), ["2000 AD", "3", nil, nil])
        XCTAssertEqual(parsed("Ch. 10.5.cbz", in: "One Piece"), ["One Piece", "10.5", nil, nil])
        XCTAssertEqual(parsed("Issue.cbz", in: "Watchmen"), ["Watchmen", nil, nil, nil])
        // A name with a series of its own keeps it; so does any name with no folder to ask.
        XCTAssertEqual(parsed("Batman 001.cbz", in: "Issues"), ["Batman", "1", nil, nil])
        XCTAssertEqual(parsed("Issue 001.cbz", in: nil), ["Issue", "1", nil, nil])
        XCTAssertEqual(parsed("001.cbz", in: nil), ["001", nil, nil, nil])
        XCTAssertEqual(parsed("Issue 001.cbz", in: "(2016)"), ["Issue", "1", nil, nil], "a folder with no name to give")
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

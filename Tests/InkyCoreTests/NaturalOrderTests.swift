import XCTest
@testable import InkyCore

final class NaturalOrderTests: XCTestCase {
    private func sorted(_ names: [String]) -> [String] {
        names.shuffled().sorted(by: NaturalOrder.areInIncreasingOrder)
    }

    func testNumbersCompareByValueNotByText() {
        XCTAssertEqual(sorted(["p10.jpg", "p2.jpg", "p1.jpg"]), ["p1.jpg", "p2.jpg", "p10.jpg"])
    }

    func testComponentsCompareOneByOne() {
        XCTAssertEqual(sorted(["Chapter 10/01.jpg", "Chapter 2/01.jpg", "Chapter 2/10.jpg", "Chapter 2/9.jpg"]),
                       ["Chapter 2/01.jpg", "Chapter 2/9.jpg", "Chapter 2/10.jpg", "Chapter 10/01.jpg"])
    }

    func testCaseDoesNotMatterButTieBreaksAreStable() {
        XCTAssertEqual(sorted(["Page2.png", "page1.jpg", "PAGE3.gif"]), ["page1.jpg", "Page2.png", "PAGE3.gif"])
        // Same name but for case: the raw bytes decide, the same way every time.
        XCTAssertEqual(sorted(["a.jpg", "A.jpg"]), ["A.jpg", "a.jpg"])
    }

    func testLeadingZerosCompareByValue() {
        XCTAssertEqual(sorted(["010.jpg", "9.jpg", "0008.jpg"]), ["0008.jpg", "9.jpg", "010.jpg"])
        XCTAssertEqual(sorted(["01.jpg", "1.jpg"]), ["1.jpg", "01.jpg"])
    }

    func testSpreadsNamedByBothPagesSitBetweenTheirPages() {
        XCTAssertEqual(sorted(["01.jpg", "02.jpg", "0304.jpg", "05.jpg", "10.jpg"]),
                       ["01.jpg", "02.jpg", "0304.jpg", "05.jpg", "10.jpg"])
        XCTAssertEqual(sorted(["009.jpg", "010011.jpg", "012.jpg"]), ["009.jpg", "010011.jpg", "012.jpg"])
        // Not consecutive halves: just a number.
        XCTAssertEqual(sorted(["05.jpg", "0307.jpg"]), ["05.jpg", "0307.jpg"])
    }

    func testHashNumberedPagesAndMixedSeparators() {
        XCTAssertEqual(sorted(["#001-10.jpg", "#001-02.jpg", "#001-01.jpg", "#002-01.jpg"]),
                       ["#001-01.jpg", "#001-02.jpg", "#001-10.jpg", "#002-01.jpg"])
        XCTAssertEqual(sorted(["page_3.jpg", "page 2.jpg", "page  10.jpg", "page_1.jpg"]),
                       ["page_1.jpg", "page 2.jpg", "page_3.jpg", "page  10.jpg"])
        XCTAssertEqual(sorted(["a\\2.jpg", "a/10.jpg", "a/1.jpg"]), ["a/1.jpg", "a\\2.jpg", "a/10.jpg"])
    }

    func testExtensionDoesNotSplitTheStem() {
        XCTAssertEqual(sorted(["p1-2.jpg", "p1.jpg", "p1a.jpg"]), ["p1.jpg", "p1-2.jpg", "p1a.jpg"])
    }

    func testNFCAndNFDSpellingsSortTogether() {
        let nfc = "\u{00E9}t\u{00E9} 2.jpg"       // été, precomposed
        let nfd = "e\u{0301}te\u{0301} 10.jpg"    // été, decomposed
        let other = "ete 3.jpg"
        let order = sorted([nfd, other, nfc])
        XCTAssertEqual(order.last, nfd, "été 10 after été 2 whatever the normalization")
        XCTAssertEqual(order.firstIndex(of: nfc)! + 1, order.firstIndex(of: nfd)!)
    }

    func testRealComicOrderFromComictagger() {
        // comictagger's own expected order for its fake_cbr.cbr (corpus manifest).
        let expected = ["!cover.jpg", "00.jpg", "page0.jpg", "Page1.jpeg", "Page2.png", "Page3.gif", "page4.webp", "page10.jpg"]
        XCTAssertEqual(sorted(expected), expected)
    }

    /// Found by FuzzPageOrder: deciding per pair whether "0304" is a spread made
    /// "0304" < "04" < "118" < "0304", and the sorted result depended on the archive's order.
    func testASpreadIsDecidedForTheWholeListSoTheOrderIsTransitive() {
        let names = ["0304.jpg", "04.jpg", "118.jpg"]
        let keys = NaturalOrder.sortKeys(for: names)
        var results = Set<[String]>()
        for start in [[0, 1, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1], [1, 0, 2], [0, 2, 1]] {
            let ordered = start.map { (keys[$0], names[$0]) }
                .sorted { NaturalOrder.compare($0.0, $1.0) == .orderedAscending }.map(\.1)
            results.insert(ordered)
        }
        XCTAssertEqual(results, [["0304.jpg", "04.jpg", "118.jpg"]])
        // Without two-digit pages in the list, "0304" is page 304.
        let alone = NaturalOrder.sortKeys(for: ["0304.jpg", "118.jpg"])
        XCTAssertEqual(NaturalOrder.compare(alone[0], alone[1]), .orderedDescending)
    }

    func testOrderIsTotalAndConsistent() {
        let names = ["01.jpg", "1.jpg", "0304.jpg", "05.jpg", "a/1.jpg", "A/1.jpg", "p10", "p2", "p02", "x.png", "x.jpg", "0400.jpg"]
        for a in names {
            XCTAssertEqual(NaturalOrder.compare(a, a), .orderedSame)
            for b in names where a != b {
                let forward = NaturalOrder.compare(a, b)
                let backward = NaturalOrder.compare(b, a)
                XCTAssertNotEqual(forward, .orderedSame, "\(a) vs \(b)")
                XCTAssertEqual(forward == .orderedAscending, backward == .orderedDescending, "\(a) vs \(b)")
            }
        }
        let once = sorted(names)
        for _ in 0..<20 { XCTAssertEqual(sorted(names), once) }
    }
}

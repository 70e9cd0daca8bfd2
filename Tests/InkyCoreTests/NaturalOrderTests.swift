import XCTest
@testable import InkyCore

final class NaturalOrderTests: XCTestCase {
    /// Sorted as a listing sorts: spreads decided once, for the whole list.
    private func sorted(_ names: [String]) -> [String] {
        let shuffled = names.shuffled()
        return zip(NaturalOrder.sortKeys(for: shuffled), shuffled)
            .sorted { NaturalOrder.compare($0.0, $1.0) == .orderedAscending }.map(\.1)
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
        let names = ["0304.jpg", "02.jpg", "05.jpg", "118.jpg"]
        let keys = NaturalOrder.sortKeys(for: names)
        var results = Set<[String]>()
        for _ in 0..<24 {
            let ordered = zip(keys, names).shuffled()
                .sorted { NaturalOrder.compare($0.0, $1.0) == .orderedAscending }.map(\.1)
            results.insert(ordered)
        }
        // "118" is three digits wide: the list is not padded to two, so "0304" is page 304.
        XCTAssertEqual(results, [["02.jpg", "05.jpg", "118.jpg", "0304.jpg"]])
        XCTAssertEqual(sorted(["0304.jpg", "02.jpg", "05.jpg", "18.jpg"]), ["02.jpg", "0304.jpg", "05.jpg", "18.jpg"])
    }

    func testAPlainSequenceReadsInNumericOrderWhateverItsPadding() {
        let unpadded = (1...5_000).map { "\($0).png" }
        XCTAssertEqual(sorted(unpadded), unpadded)
        // Pages missing from an unpadded rip do not turn "1011" into the spread 10–11.
        let gaps = unpadded.filter { $0 != "10.png" && $0 != "11.png" }
        XCTAssertEqual(sorted(gaps), gaps)
        let mixed = (1...1_300).map { "page_" + String(repeating: "0", count: $0 % 4) + "\($0).png" }
        XCTAssertEqual(sorted(mixed), mixed)
        let padded = (0...120).map { String(format: "%04d.jpg", $0) }
        XCTAssertEqual(sorted(padded), padded)
        let late = (6...405).map { $0 < 100 ? String(format: "%02d.jpg", $0) : String(format: "%04d.jpg", $0) }
        XCTAssertEqual(sorted(late), late, "0405 is page 405 in a sequence from 06")
    }

    func testSpreadsNeedTheNamesAroundThemToProveThem() {
        XCTAssertEqual(sorted(["p01.jpg", "p02-03.jpg", "p04.jpg", "p02.jpg"]), ["p01.jpg", "p02.jpg", "p02-03.jpg", "p04.jpg"])
        XCTAssertEqual(sorted(["p01.jpg", "p02_03.jpg", "p04.jpg"]), ["p01.jpg", "p02_03.jpg", "p04.jpg"])
        XCTAssertEqual(sorted(["01.jpg", "02.jpg", "03.jpg", "0405.jpg", "06.jpg", "07.jpg"]),
                       ["01.jpg", "02.jpg", "03.jpg", "0405.jpg", "06.jpg", "07.jpg"])
        // 04 is a page of its own: "0405" is page 405.
        XCTAssertEqual(sorted(["03.jpg", "04.jpg", "0405.jpg", "06.jpg"]), ["03.jpg", "04.jpg", "06.jpg", "0405.jpg"])
        // No leading zero anywhere: nothing says the list is padded.
        XCTAssertEqual(sorted(["10.jpg", "13.jpg", "1112.jpg"]), ["10.jpg", "13.jpg", "1112.jpg"])
        // Each chapter folder is its own list: 04 in chapter 2 proves nothing for chapter 1.
        XCTAssertEqual(sorted(["c1/03.jpg", "c1/0405.jpg", "c1/06.jpg", "c2/04.jpg"]),
                       ["c1/03.jpg", "c1/0405.jpg", "c1/06.jpg", "c2/04.jpg"])
    }

    func testCompatibilityFormsAndFullCaseFoldingCompareAsTheirPlainForms() {
        XCTAssertEqual(sorted(["file 10.jpg", "\u{FB01}le 9.jpg"]), ["\u{FB01}le 9.jpg", "file 10.jpg"])
        XCTAssertEqual(sorted(["13.jpg", "\u{FF11}\u{FF12}.jpg", "9.jpg"]), ["9.jpg", "\u{FF11}\u{FF12}.jpg", "13.jpg"])
        XCTAssertEqual(NaturalOrder.compare("STRASSE 2.jpg", "stra\u{DF}e 10.jpg"), .orderedAscending)
        XCTAssertEqual(NaturalOrder.compare("Stra\u{DF}e 2.jpg", "STRASSE 10.jpg"), .orderedAscending)
        // Ⅻ is the letters "xii", not a number: it sorts after every digit run.
        XCTAssertEqual(sorted(["\u{216B}.jpg", "2.jpg", "xia.jpg"]), ["2.jpg", "xia.jpg", "\u{216B}.jpg"])
    }

    func testASCIINamesFoldAsTheFullUnicodeFoldDoes() {
        // The ASCII fast path (lowercase) must agree with NFKC + full case folding on every
        // code point below 0x80, alone and inside a name.
        let all = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        for text in all + [all.joined(), "Issue 001 - The_END.JPG", "ÀBC 2.jpg"] {
            let full = text.precomposedStringWithCompatibilityMapping.folding(options: [.caseInsensitive], locale: nil)
                .precomposedStringWithCompatibilityMapping
            XCTAssertEqual(NaturalOrder.Token.fold(text), full, "\(text.unicodeScalars.map(\.value))")
        }
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

import XCTest
@testable import InkyLibrary

/// The bounded caches behind the catalog (`WeightedLRU`): what stays and what goes.
final class WeightedLRUTests: XCTestCase {
    func testTheLeastRecentlyUsedGoFirstDownToThreeQuartersOfTheBudget() {
        var lru = WeightedLRU<String, Int>(budget: 200, weight: { $0 })
        var dropped: [Int] = []
        for index in 0..<200 { dropped += lru.insert(1, for: "small \(index)") }
        XCTAssertEqual(dropped, [], "nothing goes while the whole fits the budget")
        XCTAssertNotNil(lru["small 0"], "used again: now the most recent but one")
        dropped = lru.insert(1, for: "last")
        XCTAssertEqual(dropped.count, 201 - 150, "201 of weight 1 trimmed to 75% of 200")
        XCTAssertNil(lru["small 1"])
        XCTAssertNotNil(lru["small 0"], "its use counts")
        XCTAssertNotNil(lru["small 199"])
        XCTAssertEqual(lru["last"], 1)
    }

    /// A folder of more links than the whole budget is listed in hundreds of requests: dropped
    /// as it is inserted, it would be read again for each of them.
    func testAValueHeavierThanTheBudgetStaysWhileItIsTheNewest() {
        var lru = WeightedLRU<String, Int>(budget: 100, weight: { $0 })
        for index in 0..<50 { lru.insert(1, for: "small \(index)") }
        XCTAssertEqual(lru.insert(1_000, for: "huge").count, 50, "everything else goes")
        XCTAssertEqual(lru["huge"], 1_000)
        for index in 0..<26 { lru.insert(1, for: "after \(index)") }
        XCTAssertNil(lru["huge"], "once older, it goes like any other")
    }

    /// A comic is inserted before it is listed: its pages count once `reweigh` says it grew.
    func testAValueThatGrowsIsWeighedAgain() {
        final class Box { var weight = 1 }
        var lru = WeightedLRU<String, Box>(budget: 100, weight: { $0.weight })
        let boxes = (0..<60).map { _ in Box() }
        for (index, box) in boxes.enumerated() { XCTAssertEqual(lru.insert(box, for: "\(index)").count, 0) }
        boxes[0].weight = 50
        XCTAssertNotNil(lru["0"])
        XCTAssertEqual(lru.reweigh("0").count, 34, "109 pages trimmed to 75: the oldest but the one listed go")
        XCTAssertNotNil(lru["0"])
        XCTAssertNil(lru["1"])
    }

    /// Pinned values (vault comics) never go: past the budget with them, trimming is not
    /// looked at again on every insert.
    func testPinnedValuesStayAndDoNotMakeEveryInsertTrim() {
        var lru = WeightedLRU<String, Int>(budget: 100, weight: { $0 }, pinned: { $0.hasPrefix("pinned") })
        for index in 0..<120 { lru.insert(1, for: "pinned \(index)") }
        XCTAssertEqual(lru.values.count, 120)
        var dropped = 0
        for index in 0..<6 { dropped += lru.insert(1, for: "other \(index)").count }
        XCTAssertEqual(dropped, 0, "within a quarter budget of the trim at the 101st")
        XCTAssertEqual(lru.insert(1, for: "one more").count, 6, "then every unpinned value but the newest goes")
        XCTAssertEqual(lru.values.count, 121)
    }
}

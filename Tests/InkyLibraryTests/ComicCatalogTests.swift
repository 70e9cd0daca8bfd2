import XCTest
@testable import InkyLibrary

/// The bounded caches behind the catalog (`WeightedLRU`): what stays and what goes.
final class ComicCatalogTests: XCTestCase {
    /// Trims happen once every 256 inserts: insert until the one that trims is the big one.
    private func insertUntilTrim(_ lru: inout WeightedLRU<String, Int>, last: (String, Int)) -> [Int] {
        var dropped: [Int] = []
        for index in 0..<255 { dropped += lru.insert(1, for: "small \(index)") }
        XCTAssertEqual(dropped, [], "no trim before the 256th insert")
        return lru.insert(last.1, for: last.0)
    }

    func testTheLeastRecentlyUsedGoFirstDownToThreeQuartersOfTheBudget() {
        var lru = WeightedLRU<String, Int>(budget: 200, weight: { $0 })
        let dropped = insertUntilTrim(&lru, last: ("last", 1))
        XCTAssertEqual(dropped.count, 256 - 150, "256 of weight 1 trimmed to 75% of 200")
        XCTAssertNil(lru["small 0"])
        XCTAssertNotNil(lru["small 254"])
        XCTAssertEqual(lru["last"], 1)
    }

    /// A folder of more links than the whole budget is listed in hundreds of requests: dropped
    /// as it is inserted, it would be read again for each of them.
    func testAValueHeavierThanTheBudgetStaysWhileItIsTheNewest() {
        var lru = WeightedLRU<String, Int>(budget: 100, weight: { $0 })
        let dropped = insertUntilTrim(&lru, last: ("huge", 1_000))
        XCTAssertEqual(dropped.count, 255, "everything else goes")
        XCTAssertEqual(lru["huge"], 1_000)
        for index in 0..<256 { lru.insert(1, for: "after \(index)") }
        XCTAssertNil(lru["huge"], "once older, it goes like any other")
    }
}

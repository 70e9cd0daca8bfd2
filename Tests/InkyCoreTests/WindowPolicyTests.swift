import XCTest
@testable import InkyCore

final class WindowPolicyTests: XCTestCase {
    func testDefaultWindowKeepsFiveEachSideAndPrefetchesFive() {
        let policy = WindowPolicy()
        XCTAssertEqual(policy.kept(around: 20, pageCount: 100), 15...25)
        XCTAssertEqual(policy.prefetched(after: 20, pageCount: 100), [21, 22, 23, 24, 25])
        XCTAssertFalse(policy.shouldEvict(30, current: 20))
        XCTAssertTrue(policy.shouldEvict(31, current: 20))
        XCTAssertTrue(policy.shouldEvict(9, current: 20))
    }

    func testEdgesOfTheComic() {
        let policy = WindowPolicy(window: 5, prefetch: 5)
        XCTAssertEqual(policy.kept(around: 0, pageCount: 3), 0...2)
        XCTAssertEqual(policy.prefetched(after: 2, pageCount: 3), [])
        XCTAssertEqual(policy.prefetched(after: 97, pageCount: 100), [98, 99])
        XCTAssertEqual(WindowPolicy(window: 0, prefetch: 0).prefetched(after: 1, pageCount: 10), [])
    }
}

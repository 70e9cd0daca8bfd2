import XCTest
@testable import InkyCore
@testable import InkyLibrary

final class PageCacheTests: XCTestCase {
    private func key(_ index: Int, comic: String = "a", generation: Int = 0) -> PageCache.Key {
        PageCache.Key(comic: .library(comic), generation: generation, index: index)
    }

    func testTheBudgetEvictsTheLeastRecentlyUsed() {
        let cache = PageCache(budget: 300)
        for index in 0..<3 {
            XCTAssertEqual(cache.claim([key(index)]), [key(index)])
            cache.complete(key(index), .success([UInt8](repeating: UInt8(index), count: 100)))
        }
        _ = cache.page(key(0)) // 0 is now more recent than 1
        XCTAssertEqual(cache.claim([key(3)]), [key(3)])
        cache.complete(key(3), .success([UInt8](repeating: 3, count: 100)))
        XCTAssertEqual(cache.totalBytes, 300)
        XCTAssertNotNil(cache.page(key(0)))
        XCTAssertNil(cache.page(key(1)), "the least recently used page went first")
    }

    /// The order of eviction is made once and used up: a page used since it was made is younger
    /// than it says, and one stored since younger than all of it; the least recently used goes.
    func testEvictionStaysLeastRecentlyUsedAcrossPagesUsedAndStored() {
        let cache = PageCache(budget: 300)
        func store(_ index: Int) {
            XCTAssertEqual(cache.claim([key(index)]), [key(index)])
            cache.complete(key(index), .success([UInt8](repeating: UInt8(index), count: 100)))
        }
        for index in 0..<4 { store(index) }          // 0 goes
        _ = cache.page(key(1))                        // 1 is now the youngest but 3
        store(4)                                      // 2 goes, not 1
        store(5)                                      // 3 goes
        XCTAssertEqual((0..<6).filter { cache.page(key($0)) != nil }, [1, 4, 5])
        XCTAssertEqual(cache.totalBytes, 300)
    }

    func testAPageLargerThanTheBudgetIsServedButNotCounted() {
        let cache = PageCache(budget: 10)
        _ = cache.claim([key(0)])
        cache.complete(key(0), .success([UInt8](repeating: 1, count: 50)))
        XCTAssertEqual(cache.totalBytes, 0)
        XCTAssertEqual(cache.page(key(0))?.count, 50, "kept aside while it is being read")
    }

    func testWaitersOfAPageInFlightAllGetIt() {
        let cache = PageCache(budget: 1000)
        XCTAssertEqual(cache.claim([key(0), key(1)]), [key(0), key(1)])
        XCTAssertEqual(cache.claim([key(0)]), [], "claimed once")
        let got = LockedResults()
        for _ in 0..<3 { XCTAssertTrue(cache.wait(for: key(0)) { got.append($0) }) }
        XCTAssertFalse(cache.wait(for: key(5)) { _ in XCTFail("nobody fetches 5") })
        cache.complete(key(0), .success([7]))
        cache.complete(key(1), .failure(.corrupted(path: "a", detail: "x")))
        XCTAssertEqual(got.values, [[7], [7], [7]])
        XCTAssertNil(cache.page(key(1)), "errors are not cached")
    }

    func testDropRemovesOnlyTheSelectedPagesOfOneComic() {
        let cache = PageCache(budget: 1000)
        for (comic, index) in [("a", 0), ("a", 20), ("b", 20)] {
            _ = cache.claim([key(index, comic: comic)])
            cache.complete(key(index, comic: comic), .success([1]))
        }
        let policy = WindowPolicy()
        cache.drop(comic: .library("a")) { policy.shouldEvict($0.index, current: 0) }
        XCTAssertNotNil(cache.page(key(0)))
        XCTAssertNil(cache.page(key(20)))
        XCTAssertNotNil(cache.page(key(20, comic: "b")))
    }

    /// The vault's lock: every page of the selected comics zeroed in its own storage before it
    /// is released, except one a reply still holds, which keeps its bytes (only a copy zeroed).
    func testAWipingDropZeroesThePagesItOwnsAndNoneAReplyHolds() {
        let cache = PageCache(budget: 1 << 20)
        for (comic, index) in [("v", 0), ("v", 1), ("v", 2), ("lib", 0)] {
            _ = cache.claim([key(index, comic: comic)])
            cache.complete(key(index, comic: comic), .success([UInt8](repeating: 0xA5, count: 70_000 + index)))
        }
        _ = cache.claim([key(9, comic: "v")])
        cache.complete(key(9, comic: "v"), .success([UInt8](repeating: 0x5A, count: 2 << 20)))   // over the budget: aside
        let beingSent = cache.page(key(1, comic: "v"))
        cache.drop(where: { $0.comic == .library("v") }, wiping: true)
        XCTAssertEqual(cache.wipedPages.inPlace, 3, "pages 0 and 2 and the oversize page, zeroed where they lay")
        XCTAssertEqual(cache.wipedPages.shared, 1, "page 1, shared with a reply")
        XCTAssertEqual(beingSent, [UInt8](repeating: 0xA5, count: 70_001), "a reply in flight is never sent zeros")
        XCTAssertEqual(cache.count(where: { $0.comic == .library("v") }), 0)
        XCTAssertEqual(cache.totalBytes, 70_000)
        XCTAssertNotNil(cache.page(key(0, comic: "lib")))
        cache.drop(where: { $0.comic == .library("lib") })
        XCTAssertEqual(cache.wipedPages.inPlace, 3, "an ordinary drop wipes nothing")
    }

    /// A page whose fetch began before a lock completes after it: its waiters get the error,
    /// the cache keeps nothing, and its bytes are zeroed under every reference.
    func testACompletionTheCheckDiscardsIsNeitherKeptNorServed() {
        let cache = PageCache(budget: 1000)
        _ = cache.claim([key(0), key(1)])
        let got = LockedResults()
        XCTAssertTrue(cache.wait(for: key(0)) { got.append($0) })
        let page: [UInt8] = Array(1...100)
        let locked = ComicError.io(path: "object", errno: EIO, detail: "locked")
        cache.complete(key(0), .success(page), discard: { locked })
        XCTAssertEqual(got.values, [[]], "the waiter got the error")
        XCTAssertNil(cache.page(key(0)))
        XCTAssertEqual(cache.count, 0)
        XCTAssertEqual(page, [UInt8](repeating: 0, count: 100), "the bytes were wiped, never handed to anyone")
        cache.complete(key(1), .success([1, 2]), discard: { nil })
        XCTAssertEqual(cache.page(key(1)), [1, 2], "kept when the check lets it")
    }
}

final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [[UInt8]] = []
    func append(_ result: Result<[UInt8], ComicError>) { lock.withLock { stored.append((try? result.get()) ?? []) } }
    var values: [[UInt8]] { lock.withLock { stored } }
}

import InkyTree
import Synchronization
import XCTest
@testable import InkyFUSE

/// When a folder's listing is dropped from the kernel: once enough of its subdirectories were
/// listed that relisting it costs less than asking each one's attributes again, once until it
/// is listed again, and never on a `ro` mount.
final class FUSEParentRelistingTests: XCTestCase {
    /// Records which nodes were invalidated, in order.
    private final class Recorder: KernelCacheInvalidating {
        let nodes = Mutex<[NodeID]>([])
        func invalidateEntry(parent: NodeID, name: String) {}
        func invalidateNode(_ id: NodeID) { nodes.withLock { $0.append(id) } }
        func listingReady(_ id: NodeID, stamp: ListingStamp, entries: [DirectoryEntry]) {}
        var sent: [NodeID] { nodes.withLock { $0 } }
    }

    func testASmallFoldersListingIsDroppedOnceItsFirstSubdirectoryIsListed() {
        let cache = Recorder()
        let relisting = FUSEParentRelisting(enabled: true)
        XCTAssertFalse(relisting.listed(1, entries: 3, parent: 1, cache: cache), "the root, its own parent")
        XCTAssertFalse(relisting.listed(2, entries: 25, parent: 1, cache: cache), "a series folder: first listed")
        XCTAssertEqual(cache.sent, [1], "the root holds a listed subdirectory: dropped")
        relisting.listed(10, entries: 20, parent: 2, cache: cache)
        relisting.listed(11, entries: 20, parent: 2, cache: cache)
        relisting.listed(3, entries: 25, parent: 1, cache: cache)
        XCTAssertEqual(cache.sent, [1, 2], "each once, however many of their subdirectories follow")
        XCTAssertTrue(relisting.listed(2, entries: 25, parent: 1, cache: cache), "a listing this dropped, fetched again")
        XCTAssertEqual(cache.sent, [1, 2], "the root was dropped and not fetched since: nothing to drop")
        XCTAssertTrue(relisting.listed(1, entries: 3, parent: 1, cache: cache))
        XCTAssertFalse(relisting.listed(1, entries: 3, parent: 1, cache: cache), "fetched once more on its own: not one of ours")
        relisting.listed(2, entries: 25, parent: 1, cache: cache)
        XCTAssertEqual(cache.sent, [1, 2, 1], "fetched again, the root counts its subdirectories anew")
    }

    func testALargeFolderWaitsForASubdirectoryPer64OfItsEntries() {
        let cache = Recorder()
        let relisting = FUSEParentRelisting(enabled: true)
        relisting.listed(1, entries: 200, parent: 1, cache: cache)
        for comic in NodeID(100)..<103 { relisting.listed(comic, entries: 20, parent: 1, cache: cache) }
        XCTAssertEqual(cache.sent, [], "3 of 200: three GETATTRs cost less than 200 entries again")
        relisting.listed(103, entries: 20, parent: 1, cache: cache)
        XCTAssertEqual(cache.sent, [1], "the fourth: 1 + 200 / 64")
    }

    func testNothingIsDroppedOnAReadOnlyMount() {
        let cache = Recorder()
        let relisting = FUSEParentRelisting(enabled: false)
        relisting.listed(1, entries: 3, parent: 1, cache: cache)
        relisting.listed(2, entries: 3, parent: 1, cache: cache)
        XCTAssertEqual(cache.sent, [], "the kernel keeps access times there: no GETATTR to save")
    }
}

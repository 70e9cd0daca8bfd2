import Foundation
import InkyCore
import Synchronization
import XCTest
@testable import InkyLibrary

/// The window cache on its own, without a mount or a worker: a miss claims the page and the
/// pages after it and hands them to the library's request (one request a page, or one on the
/// comic's strand for a solid archive), a hit is served on the caller's thread, and a read far
/// away evicts what is out of the window.
final class ComicPagesTests: XCTestCase {
    private let identity = FileIdentity(size: 1_000, modifiedNanoseconds: 1_700_000_000_000_000_000, inode: 42)

    /// A listed comic of `count` pages, its state as the catalog would hold it.
    private func comic(pages count: Int, solid: Bool) throws -> (ComicState, ComicState.Snapshot, ComicListing) {
        let pages = (0..<count).map { Page(number: $0, name: "\($0).jpg", sourcePath: "\($0).jpg", entryIndex: $0, size: 10) }
        let listing = ComicListing(format: .zip, pages: pages, comicInfo: nil, skipped: [], isSolid: solid)
        let state = ComicState(comic: .library("A.cbz"), realPath: "/nonexistent/A.cbz")
        _ = state.replace(identity, ComicGenerations())
        state.store(.success(listing), for: identity)
        return (state, try XCTUnwrap(state.snapshot()), listing)
    }

    /// What the library was asked to fetch, request by request.
    private final class Requests {
        var made: [(indices: [Int], strand: ComicRef?)] = []
        func request(_ claimed: [PageCache.Key], _ state: ComicState, _ snapshot: ComicState.Snapshot,
                     _ listing: ComicListing, _ strand: ComicRef?) {
            made.append((claimed.map(\.index), strand))
        }
    }

    func testAMissClaimsThePageAndThoseAheadAndAHitIsServedAtOnce() throws {
        let pages = ComicPages(budget: 1 << 20, fetchLimit: 2, window: WindowPolicy(window: 2, prefetch: 3))
        let (state, snapshot, listing) = try comic(pages: 20, solid: false)
        let requests = Requests()
        let got = Mutex<[UInt8]?>(nil)
        var moves: [Int] = []
        pages.read(state, snapshot, listing, index: 0, request: requests.request, moved: { moves.append($0) }) { result in
            got.withLock { $0 = try? result.get() }
        }
        XCTAssertEqual(requests.made.map(\.indices), [[0], [1], [2], [3]], "one request a page, the page first, then those ahead")
        XCTAssertTrue(requests.made.allSatisfy { $0.strand == nil }, "a non-solid comic's pages decode apart")
        XCTAssertNil(got.withLock { $0 }, "a miss waits for its fetch")
        XCTAssertEqual(moves.count, 1)
        for index in 0...3 {
            pages.cache.complete(PageCache.Key(comic: state.comic, generation: snapshot.generation, index: index), .success([UInt8(index)]))
        }
        XCTAssertEqual(got.withLock { $0 }, [0], "its waiter has the page once fetched")

        requests.made = []
        let served = Mutex<[UInt8]?>(nil)
        pages.read(state, snapshot, listing, index: 1, request: requests.request, moved: { moves.append($0) }) { result in
            served.withLock { $0 = try? result.get() }
        }
        XCTAssertEqual(served.withLock { $0 }, [1], "a hit is served before read returns")
        XCTAssertEqual(requests.made.map(\.indices), [[4]], "only the page ahead not cached yet is asked for")

        // Far away: pages more than twice the window from the reader go.
        pages.read(state, snapshot, listing, index: 15, request: requests.request, moved: { moves.append($0) }) { _ in }
        XCTAssertNil(pages.cache.page(PageCache.Key(comic: state.comic, generation: snapshot.generation, index: 0)))
        XCTAssertEqual(moves.count, 3)
    }

    func testASolidComicsPagesGoInOneRequestOnItsStrand() throws {
        let pages = ComicPages(budget: 1 << 20, fetchLimit: 2, window: WindowPolicy(window: 2, prefetch: 3))
        let (state, snapshot, listing) = try comic(pages: 20, solid: true)
        let requests = Requests()
        pages.read(state, snapshot, listing, index: 5, request: requests.request, moved: { _ in }) { _ in }
        XCTAssertEqual(requests.made.map(\.indices), [[5], [6, 7, 8]], "the page, then those after it in one request")
        XCTAssertEqual(requests.made.map(\.strand), [state.comic, state.comic], "one decoder, one stream")
    }
}

import Foundation
import InkyCore

/// The window cache of one mount and the bounds its fetches run in: decoded pages under the
/// mount's budget (`PageCache`), the reading window around each comic's last read (evicting
/// behind it, fetching ahead of it), and the fetch threads (`BoundedWork`).
///
/// A hit is served at once; a miss claims the page and the next `--prefetch` pages and has
/// them fetched: one request per page (the pool spreads them over its workers), or one request
/// on the comic's strand for a solid archive, whose decoder reads one stream in order. How a
/// claimed page is read (a worker, the daemon's own stored-ZIP reader, the disk caches, the
/// vault's key and its lock check) is the library's, handed in as a `Request`: this type knows
/// pages and comics' states, nothing of workers, the vault or the kernel.
final class ComicPages: Sendable {
    /// Sends pages just claimed to be fetched and completes them in the cache; `strand`: the
    /// comic, when its requests must run one after another, in order (a solid archive).
    typealias Request = (_ claimed: [PageCache.Key], _ state: ComicState, _ snapshot: ComicState.Snapshot,
                         _ listing: ComicListing, _ strand: ComicRef?) -> Void

    /// Decoded pages under the mount's budget, with the waiters of pages being fetched; the
    /// vault's decrypted pages share it (`VaultSession` drops and wipes them at lock).
    let cache: PageCache
    /// Page fetches, at most as many at once as there are workers to serve them, and one more for
    /// stored ZIP pages, which the daemon reads itself while every worker decodes.
    let fetches: BoundedWork<ComicRef>
    private let window: WindowPolicy

    init(budget: Int, fetchLimit: Int, window: WindowPolicy) {
        cache = PageCache(budget: budget)
        fetches = BoundedWork(label: "inkyfs.fetch", limit: fetchLimit)
        self.window = window
    }

    /// Page `index` of the comic of `state`, as listed in `snapshot`: `completion` runs at once on
    /// a hit (on the caller's thread), later from a fetch thread on a miss. `moved` runs with the
    /// read's move (`ComicState.moveTo`) before the reply on a hit, after the page's claim on a
    /// miss: the resume run moves before a reader has the page (and asks for the next, whose
    /// move must come after), and its first decode waits behind the page the reader waits for.
    /// Then the window moves (`maintainWindow`).
    func read(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing, index: Int,
              request: Request, moved: (_ move: Int) -> Void, completion: @escaping PageCache.Waiter) {
        let key = PageCache.Key(comic: state.comic, generation: snapshot.generation, index: index)
        let (previous, move) = state.moveTo(page: index)
        if let bytes = cache.page(key) {
            moved(move)
            completion(.success(bytes))
        } else {
            if !cache.wait(for: key, completion) {
                fetch(state, snapshot, listing, pages: [index], first: completion, request: request)
            }
            moved(move)
        }
        maintainWindow(state, snapshot, listing, current: index, previous: previous, move: move, request: request)
    }

    /// Evicts pages outside twice the window and fetches the next pages ahead.
    ///
    /// Only while this read is the comic's last: a read the reader has left behind (its thread
    /// late, as on a loaded machine) would evict, around a page long passed, the pages the reader
    /// reads next, and fetch again pages evicted behind it: a solid decoder sent back for each.
    /// The later read moves the window itself.
    private func maintainWindow(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing,
                                current: Int, previous: Int, move: Int, request: Request) {
        var evicted: [[UInt8]] = []
        state.fetchOrder.withLock { _ in
            guard state.isLastMove(move) else { return }
            if current != previous {
                let policy = window
                evicted = cache.drop(comic: state.comic) { key in
                    key.generation != snapshot.generation || policy.shouldEvict(key.index, current: current)
                }
            }
            var ahead = window.prefetched(after: current, pageCount: listing.pages.count)
            if listing.isSolid, let here = listing.pages[safe: current] {
                // In a solid stream only pages after this one are cheap; the rest wait for their turn.
                ahead = ahead.filter { listing.pages[$0].source > here.source }
            }
            if !ahead.isEmpty { _ = claimAndRequest(state, snapshot, listing, pages: ahead, first: nil, request: request) }
        }
        evicted.removeAll()  // freed once the comic's other reads may go on
    }

    /// The pages after `index` a read of it fetches ahead.
    func ahead(of index: Int, pageCount: Int) -> [Int] {
        window.prefetched(after: index, pageCount: pageCount)
    }

    /// Fetches pages on the comic's queue, in stream order, and completes their waiters.
    func fetch(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing,
               pages: [Int], first waiter: PageCache.Waiter?, request: Request) {
        let claimed = state.fetchOrder.withLock { _ in claimAndRequest(state, snapshot, listing, pages: pages, first: waiter, request: request) }
        // Outside the lock: a page cached already calls its waiter here (only the first page has one).
        if let waiter, let first = pages.first,
           case let firstKey = PageCache.Key(comic: state.comic, generation: snapshot.generation, index: first),
           !claimed.contains(firstKey), !cache.wait(for: firstKey, waiter) {
            waiter(.failure(.parserFailed(path: state.realPath, detail: "page vanished from the cache")))
        }
    }

    /// Claims the pages (`waiter` waiting for the first when it is claimed) and sends the claimed
    /// ones to be fetched. Under the comic's `fetchOrder`, so the strand gets them in claim order.
    private func claimAndRequest(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing,
                                 pages: [Int], first waiter: PageCache.Waiter?, request: Request) -> [PageCache.Key] {
        let keys = pages.map { PageCache.Key(comic: state.comic, generation: snapshot.generation, index: $0) }
        let claimed = cache.claim(keys, first: waiter)
        guard !claimed.isEmpty else { return claimed }
        if listing.isSolid {
            // One decoder, one stream: the pages in stream order, one request after another.
            request(claimed, state, snapshot, listing, state.comic)
        } else {
            // Entries of a non-solid archive decode independently: one request per page, so the
            // pool spreads them over its workers and the cores (a deflated CBZ reads ~2x faster).
            for key in claimed { request([key], state, snapshot, listing, nil) }
        }
        return claimed
    }
}

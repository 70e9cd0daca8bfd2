import Foundation
import InkyCore
import Synchronization

/// Pages whose size is known only once rendered (PDF pages of text or vector art): `stat` must
/// tell their exact size before any read, so the first lookup renders the page (through the
/// window cache, with the pages after it, as a read would) and the size is kept in the listing
/// and in the index, where a remount finds it.
extension LibraryFilesystem {
    /// Waits for page `index` to be rendered; its bytes stay in the cache for the read that follows.
    func renderedSize(_ comic: ComicRef, _ snapshot: ComicState.Snapshot, _ listing: ComicListing, _ index: Int) -> Result<Int64, Errno> {
        guard let state = comicState(comic) else { return .failure(.ESTALE) }
        let key = PageCache.Key(comic: comic, generation: snapshot.generation, index: index)
        if let bytes = pages.cache.page(key) { return .success(Int64(bytes.count)) }
        let outcome = AwaitedResult<Result<Int64, ComicError>>()
        let waiter: PageCache.Waiter = { result in outcome.finish(result.map { Int64($0.count) }) }
        if !pages.cache.wait(for: key, waiter) {
            let ahead = pages.ahead(of: index, pageCount: listing.pages.count)
            fetch(state, snapshot, listing, pages: [index] + ahead, first: waiter)
        }
        return outcome.wait().mapError { error in
            logger(.error("cannot render page \(index + 1): \(loggable(error, of: comic))"))
            return error.errno
        }
    }

    /// Keeps sizes learned by a fetch: in the comic's listing at once, in the index on the state
    /// queue. Page by page, as each arrives: the pages rendered ahead may still be on their way
    /// when the mount ends, and the page a lookup waited for must not be lost with them.
    func keep(_ learned: [Int: Int64], crcs: [Int: UInt32] = [:], of state: ComicState, generation: Int) {
        guard !learned.isEmpty || !crcs.isEmpty, let (listing, identity) = state.learn(sizes: learned, crcs: crcs, generation: generation),
              let file = libraryFile(state.comic) else { return }
        indexWriter?.store(file, identity: identity, .success(listing))
    }

    /// An indexed listing serves only if its rendered sizes were measured with today's settings.
    static func fits(_ indexed: Result<ComicListing, ComicError>, _ rendering: PageRendering) -> Bool {
        guard case .success(let listing) = indexed else { return true }
        return listing.fits(rendering)
    }
}

/// One result handed from the thread that makes it (a fetch queue) to the thread that waits for it.
final class AwaitedResult<Value: Sendable>: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let result = Mutex<Value?>(nil)

    func finish(_ value: Value) {
        result.withLock { $0 = value }
        done.signal()
    }

    func wait() -> Value {
        done.wait()
        return result.withLock { $0! }
    }
}

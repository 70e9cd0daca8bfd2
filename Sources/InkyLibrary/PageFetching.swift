import Foundation
import InkyCore
import InkyTree
import InkyWorker

/// Pages through the window cache: a hit is served at once; a miss claims the page and the
/// next `--prefetch` pages and fetches them from the backend (a worker, or the daemon's own
/// reader for stored ZIP pages) on the comic's serial queue (solid archives) or in parallel.
extension LibraryFilesystem {
    /// `forReader`: false for reads no reader stands at (a CBZ copied whole, a page fetched ahead
    /// of a browser's reader): the resume run does not follow them. Whether a read counts as
    /// reading is the caller's to say (`noteRead`, `pageReadThrough`).
    func readPage(_ comic: ComicRef, generation: Int, index: Int, forReader: Bool = true,
                  completion: @escaping @Sendable (Result<[UInt8], Errno>) -> Void) {
        // The state in memory, else the comic again (from the index): states are dropped when
        // many comics are in use, while the kernel may keep a page open much longer.
        let current = comicState(comic).flatMap { state in state.snapshot().map { (state, $0) } } ?? (try? currentComic(comic).get())
        guard let (state, snapshot) = current, snapshot.generation == generation,
              case .success(let listing) = snapshot.listing, index < listing.pages.count else {
            // A page of a locked vault: the file is still open, its content is gone.
            return completion(.failure(comic.isVault ? .EIO : .ESTALE))
        }
        let key = PageCache.Key(comic: comic, generation: generation, index: index)
        let (previous, move) = state.moveTo(page: index)
        // The resume run moves before the reply (once a reader has this page it asks for the next,
        // whose move must come after), and after the page's claim when it is fetched (the run's first
        // decode from the start, after a remount, waits for the page the reader is waiting for).
        if let bytes = cache.page(key) {
            if forReader { keepResumeRun(state, snapshot, listing, current: index, move: move) }
            completion(.success(bytes))
        } else {
            let logger = self.logger
            let waiter: PageCache.Waiter = { [self] result in
                completion(result.mapError { error in
                    logger(.error("read failed: \(loggable(error, of: comic))"))
                    return error.errno
                })
            }
            if !cache.wait(for: key, waiter) {
                fetch(state, snapshot, listing, pages: [index], first: waiter)
            }
            if forReader { keepResumeRun(state, snapshot, listing, current: index, move: move) }
        }
        maintainWindow(state, snapshot, listing, current: index, previous: previous, move: move)
    }

    /// Evicts pages outside twice the window and fetches the next pages ahead.
    ///
    /// Only while this read is the comic's last: a read the reader has left behind (its thread
    /// late, as on a loaded machine) would evict, around a page long passed, the pages the reader
    /// reads next, and fetch again pages evicted behind it: a solid decoder sent back for each.
    /// The later read moves the window itself.
    private func maintainWindow(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing,
                                current: Int, previous: Int, move: Int) {
        state.fetchOrder.withLock { _ in
            guard state.isLastMove(move) else { return }
            if current != previous {
                let policy = options.window
                cache.drop(comic: state.comic) { key in
                    key.generation != snapshot.generation || policy.shouldEvict(key.index, current: current)
                }
            }
            var ahead = options.window.prefetched(after: current, pageCount: listing.pages.count)
            if listing.isSolid, let here = listing.pages[safe: current] {
                // In a solid stream only pages after this one are cheap; the rest wait for their turn.
                ahead = ahead.filter { listing.pages[$0].source > here.source }
            }
            if !ahead.isEmpty { _ = claimAndRequest(state, snapshot, listing, pages: ahead, first: nil) }
        }
    }

    /// Fetches pages on the comic's queue, in stream order, and completes their waiters.
    func fetch(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing,
               pages: [Int], first waiter: PageCache.Waiter?) {
        let keys = pages.map { PageCache.Key(comic: state.comic, generation: snapshot.generation, index: $0) }
        let claimed = state.fetchOrder.withLock { _ in claimAndRequest(state, snapshot, listing, pages: pages, first: waiter) }
        // Outside the lock: a page cached already calls its waiter here.
        if let waiter, let firstKey = keys.first, !claimed.contains(firstKey), !cache.wait(for: firstKey, waiter) {
            waiter(.failure(.parserFailed(path: state.realPath, detail: "page vanished from the cache")))
        }
    }

    /// Claims the pages (`waiter` waiting for the first when it is claimed) and sends the claimed
    /// ones to be fetched. Under the comic's `fetchOrder`, so the strand gets them in claim order.
    private func claimAndRequest(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing,
                                 pages: [Int], first waiter: PageCache.Waiter?) -> [PageCache.Key] {
        let keys = pages.map { PageCache.Key(comic: state.comic, generation: snapshot.generation, index: $0) }
        let claimed = cache.claim(keys, first: waiter)
        guard !claimed.isEmpty else { return claimed }
        if listing.isSolid {
            // One decoder, one stream: the pages in stream order, one request after another.
            request(claimed, state, snapshot, listing, strand: state.comic)
        } else {
            // Entries of a non-solid archive decode independently: one request per page, so the
            // pool spreads them over its workers and the cores (a deflated CBZ reads ~2x faster).
            for key in claimed { request([key], state, snapshot, listing, strand: nil) }
        }
        return claimed
    }

    /// Asks the backend for the claimed pages in one request on a fetch thread and completes
    /// them; requests of one `strand` (a solid comic) run one after another, in order.
    private func request(_ claimed: [PageCache.Key], _ state: ComicState, _ snapshot: ComicState.Snapshot,
                         _ listing: ComicListing, strand: ComicRef?) {
        let backend = self.backend, cache = self.cache, limits = options.limits, path = state.realPath
        let discard = vaultPageCheck(for: state.comic, path: path)
        let onDisk = convertedPageKeys(claimed, state.comic, snapshot, listing)
        let resume = resumeComic(state.comic, snapshot, listing)
        let fromResume = { @Sendable (pending: inout Set<PageCache.Key>) in
            guard let resume, let pages = self.options.resumePages else { return }
            for key in pending {
                let page = listing.pages[key.index]
                guard let bytes = pages.page(resume, key.index, size: page.isSizeKnown ? page.size : nil) else { continue }
                pending.remove(key)
                cache.complete(key, .success(bytes))
            }
        }
        let work = { @Sendable [self] (claimed: [PageCache.Key]) in
            // Pages completed meanwhile (decoded ahead for the resume run) are not asked again: the
            // decoder is past them.
            var pending = Set(claimed.filter { resume == nil || cache.isInFlight($0) })
            // Kept pages again: one may have been written ahead while this waited for the strand.
            fromResume(&pending)
            if pending.isEmpty { return }
            if let locked = discard() {
                // Locked since the claim: the object is not read at all.
                for key in pending { cache.complete(key, .failure(locked)) }
                return
            }
            let delivered = { (key: PageCache.Key, result: Result<[UInt8], ComicError>) in
                if !listing.pages[key.index].isSizeKnown, case .success(let bytes) = result {
                    // Known before the waiters wake, so a lookup of this page needs no render.
                    self.keep([key.index: Int64(bytes.count)], of: state, generation: snapshot.generation)
                }
                cache.complete(key, result, discard: discard)
            }
            if let pages = options.pageCache {
                for (key, diskKey) in onDisk {
                    let page = listing.pages[key.index]
                    guard let bytes = pages.page(diskKey, size: page.isSizeKnown ? page.size : nil) else { continue }
                    pending.remove(key)
                    delivered(key, .success(bytes))
                }
                if pending.isEmpty { return }
            }
            let bySource = Dictionary(pending.map { (listing.pages[$0.index].source, $0) }, uniquingKeysWith: { first, _ in first })
            let requests = pending.map { EntryRequest(listing.pages[$0.index]) }.sorted { $0.source < $1.source }
            do throws(ComicError) {
                if let resume, let last = pending.map(\.index).max() { options.resumePages?.decoded(resume, through: last) }
                try backend.read(source(of: state), identity: snapshot.identity, entries: requests, limits: limits) { source, result in
                    guard let key = bySource[source], pending.remove(key) != nil else { return }
                    if let diskKey = onDisk[key], case .success(let bytes) = result { options.pageCache?.store(diskKey, bytes) }
                    if let resume, let pages = options.resumePages, pages.isInRun(resume, key.index), case .success(let bytes) = result {
                        pages.store(resume, key.index, bytes)
                    }
                    delivered(key, result)
                }
                for key in pending { cache.complete(key, .failure(.corrupted(path: path, detail: "the page was not delivered"))) }
            } catch {
                // A parser that crashed or hung on this comic will do so again: show ERROR.txt.
                if case .parserFailed = error {
                    state.markFailed(error, generation: snapshot.generation)
                    // The kernel keeps directory listings: it must read ERROR.txt in this one now.
                    kernelCache?.invalidateNode(nodes.id(for: .comic(state.comic)))
                }
                for key in pending { cache.complete(key, .failure(error)) }
            }
        }
        // Pages of the run on disk are served off the strand, so they never wait behind a decode from
        // the start. All go to the strand now too, in the order claimed: there a page the disk served
        // is no longer in flight and not asked again, and one it did not hold is decoded in its turn
        // (sent there only after the disk missed it, it would come after fetches claimed later, and
        // the decoder, past it by then, would go back).
        let kept = resume.map { resume in claimed.filter { options.resumePages?.mayKeep(resume, $0.index) ?? false } } ?? []
        if !kept.isEmpty {
            fetches.submit(strand: nil) {
                var pending = Set(kept)
                fromResume(&pending)
            }
        }
        fetches.submit(strand: strand) { work(claimed) }
    }

    /// The disk cache's keys of the claimed pages a worker converts, for a library comic only.
    private func convertedPageKeys(_ claimed: [PageCache.Key], _ comic: ComicRef, _ snapshot: ComicState.Snapshot,
                                   _ listing: ComicListing) -> [PageCache.Key: ConvertedPageCache.Key] {
        guard options.pageCache != nil, let rendering = listing.rendering else { return [:] }
        var keys: [PageCache.Key: ConvertedPageCache.Key] = [:]
        for key in claimed where ConvertedPageCache.holds(listing.pages[key.index], of: listing) {
            keys[key] = ConvertedPageCache.Key(comic, identity: snapshot.identity, index: key.index, rendering: rendering)
        }
        return keys
    }
}

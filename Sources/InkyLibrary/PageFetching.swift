import Foundation
import InkyCore
import InkyTree
import InkyWorker

/// The library's side of the window cache (`ComicPages`): a page's comic found and checked, the
/// resume run moved at each read, and the reading of claimed pages: the disk caches first, then
/// the backend (a worker, or the daemon's own reader for stored ZIP pages), with the vault's
/// lock check, on the comic's strand (solid archives) or in parallel.
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
        let logger = self.logger
        pages.read(state, snapshot, listing, index: index, request: request) { move in
            if forReader { keepResumeRun(state, snapshot, listing, current: index, move: move) }
        } completion: { [self] result in
            completion(result.mapError { error in
                logger(.error("read failed: \(loggable(error, of: comic))"))
                return error.errno
            })
        }
    }

    /// Fetches pages on the comic's queue, in stream order, and completes their waiters.
    func fetch(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing,
               pages indices: [Int], first waiter: PageCache.Waiter?) {
        pages.fetch(state, snapshot, listing, pages: indices, first: waiter, request: request)
    }

    /// Asks the backend for the claimed pages in one request on a fetch thread and completes
    /// them; requests of one `strand` (a solid comic) run one after another, in order.
    private func request(_ claimed: [PageCache.Key], _ state: ComicState, _ snapshot: ComicState.Snapshot,
                         _ listing: ComicListing, strand: ComicRef?) {
        let backend = self.backend, cache = pages.cache, fetches = pages.fetches, limits = options.limits, path = state.realPath
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
                    changeObserver?.nodeChanged(.comic(state.comic))
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

import Foundation
import InkyCore
import InkyWorker

/// The resume run of comics in solid archives (`ResumePages`): moved at each page a reader reads,
/// its pages written ahead on the comic's fetch strand, in stream order.
extension LibraryFilesystem {
    /// The comic's pages in the resume store, when it keeps any: a library comic in a solid
    /// archive, read without conversion (converted pages have their own disk cache), in a
    /// mount that records reading and keeps a page cache.
    func resumeComic(_ comic: ComicRef, _ snapshot: ComicState.Snapshot, _ listing: ComicListing) -> ResumePages.Comic? {
        guard options.resumePages != nil, options.recordProgress, listing.isSolid,
              !(listing.rendering?.conversion.isActive ?? false) else { return nil }
        return ResumePages.Comic(comic, identity: snapshot.identity, rendering: listing.rendering)
    }

    /// After a reader read page `current`: moves the comic's run there. Once the reader stays on
    /// it (`ResumePages.settle`), or at once for the comic's first read in this mount and for its
    /// last page, the comic's strand writes the run: removes the pages that left it and decodes
    /// the ones missing. Reading the last page drops them all. `order`: the read's move
    /// (`ComicState.moveTo`); a read a later one overtook moves nothing.
    func keepResumeRun(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing, current: Int, move order: Int) {
        guard let resume = options.resumePages, let comic = resumeComic(state.comic, snapshot, listing),
              let move = resume.move(comic, to: resume.run(reading: current, of: listing.pages.count), order: order) else { return }
        if move.first || current == listing.pages.count - 1 {
            return writeRun(of: state, snapshot, listing, comic)
        }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + ResumePages.settle) { [self] in
            if resume.isLastMove(comic, move.number) { writeRun(of: state, snapshot, listing, comic) }
        }
    }

    private func writeRun(of state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing, _ comic: ResumePages.Comic) {
        guard let resume = options.resumePages else { return }
        let count = listing.pages.count
        pages.fetches.submit(strand: state.comic) { [self] in
            let (run, written, first) = resume.take(comic)
            guard let run else {
                resume.remove(comic, 0..<count)
                resume.forget(comic)
                return
            }
            if let written { resume.remove(comic, written.filter { !run.contains($0) }) }
            var missing = run.filter { !resume.contains(comic, $0) }
            // The comic's first write in this mount, before any of its pages was written here: what
            // is on disk an earlier mount kept.
            if first, !resume.isPositioned(comic), missing.count < run.count {
                logger("resumed \(state.realPath) at page \(run.lowerBound + 1): \(run.count - missing.count) of its next \(run.count) pages kept on disk")
            }
            // Everything kept and no decoder here yet (the first read after a remount): the first
            // page after the run, decoded now, leaves a worker's decoder there for the reader.
            if missing.isEmpty, !resume.isPositioned(comic),
               let next = (run.upperBound + 1..<count).first(where: { !resume.contains(comic, $0) }) {
                // Once the page the reader waits for is served (from disk): the decode takes a core.
                let position = { @Sendable [self] in
                    pages.fetches.submit(strand: state.comic) { [self] in
                        guard !resume.isPositioned(comic), !resume.contains(comic, next) else { return }
                        decodeAhead([next], of: state, snapshot, listing, into: comic)
                    }
                }
                let here = PageCache.Key(comic: state.comic, generation: snapshot.generation, index: run.lowerBound)
                if !pages.cache.wait(for: here, { _ in position() }) { position() }
                return
            }
            // Pages the window cache holds are written as they are: no decoder goes back for them.
            missing.removeAll { index in
                guard let bytes = pages.cache.page(PageCache.Key(comic: state.comic, generation: snapshot.generation, index: index)) else {
                    return false
                }
                resume.store(comic, index, bytes)
                return true
            }
            // Never behind the decoder: that page would cost a decode from the start, for the disk
            // alone (a reader who goes back there pays it on its own read, as without this store).
            let position = resume.decodedThrough(comic)
            missing.removeAll { $0 < position }
            guard !missing.isEmpty else { return }
            decodeAhead(missing, of: state, snapshot, listing, into: comic)
        }
    }

    /// Decodes pages for the resume store alone (a reader waiting for one of them gets it too).
    private func decodeAhead(_ indices: [Int], of state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing,
                             into comic: ResumePages.Comic) {
        guard let resume = options.resumePages else { return }
        if let last = indices.max() { resume.decoded(comic, through: last) }
        let byIndex = Dictionary(indices.map { (listing.pages[$0].source, $0) }, uniquingKeysWith: { first, _ in first })
        let requests = indices.map { EntryRequest(listing.pages[$0]) }.sorted { $0.source < $1.source }
        do throws(ComicError) {
            try backend.read(source(of: state), identity: snapshot.identity, entries: requests, limits: options.limits) { source, result in
                guard let index = byIndex[source], case .success(let bytes) = result else { return }
                resume.store(comic, index, bytes)
                let key = PageCache.Key(comic: state.comic, generation: snapshot.generation, index: index)
                if pages.cache.isInFlight(key) { pages.cache.complete(key, .success(bytes)) }
            }
        } catch {
            // Only the store missed out: a reader's own read of these pages meets the error itself.
            logger(.error("cannot keep pages ahead: \(loggable(error, of: state.comic))"))
        }
    }

    /// A changed comic's kept pages go with the file they were of.
    func dropResumePages(of comic: ComicRef, _ before: ComicState.Snapshot) {
        guard let resume = options.resumePages, case .success(let listing) = before.listing,
              let kept = resumeComic(comic, before, listing) else { return }
        pages.fetches.submit(strand: comic) {
            resume.remove(kept, 0..<listing.pages.count)
            resume.forget(kept)
        }
    }
}

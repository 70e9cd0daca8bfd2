import Foundation
import InkyCore
import InkyStore
import InkyWorker

/// `inkyfs index`: lists every comic of a library whose index entry is missing or stale, in
/// parallel workers, and stores the results under the same keys the mount looks up.
public enum LibraryIndexer {
    public struct Outcome: Sendable {
        public var path: String
        /// nil when the index entry was already current and the comic readable.
        public var result: Result<Int, ComicError>?
        /// The index entry was current: a failure here is the comic still broken, not listed again.
        public var unchanged = false
    }

    /// The comic files the mount shows as directories (archives and PDFs, not image folders).
    public static func comicFiles(in library: String) throws(ComicError) -> [String] {
        // The walk never follows a link: a regular file now is one, whatever it was then.
        try LibraryWalk.comics(in: library).filter { path in
            var info = stat()
            return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && ComicFiles.isComicFile((path as NSString).lastPathComponent)
        }
    }

    /// Comics listed between two writes to the index: up to 32, fewer for a small library so
    /// every core still gets comics to list.
    static func batchSize(for count: Int) -> Int {
        max(1, min(32, count / max(1, ProcessInfo.processInfo.activeProcessorCount * 8)))
    }

    /// Indexes `paths`; `progress` gets every outcome in order, one call at a time, each once
    /// its listing is stored.
    public static func index(_ paths: [String], state: StateDatabase, pool: WorkerPool, limits: ComicLimits,
                             progress: @escaping @Sendable (Int, Outcome) -> Void) {
        let emitter = OrderedDelivery<Outcome>(count: paths.count, deliver: progress)
        let batch = batchSize(for: paths.count)
        let batches = (paths.count + batch - 1) / batch
        DispatchQueue.concurrentPerform(iterations: batches) { number in
            let indices = number * batch ..< min(paths.count, (number + 1) * batch)
            var outcomes: [(Int, Outcome)] = []
            var listed: [(file: LibraryFile, identity: FileIdentity, result: Result<ComicListing, ComicError>)] = []
            for index in indices {
                let path = paths[index], file = LibraryFile(path: path)
                guard case .success(let identity) = FileIdentity.of(path) else {
                    outcomes.append((index, Outcome(path: path, result: .failure(.io(path: path, errno: ENOENT, detail: "vanished")))))
                    continue
                }
                if let indexed = state.indexedListing(file, identity: identity), LibraryFilesystem.fits(indexed, limits.rendering) {
                    // A comic that failed and has not changed since is still broken: say so again.
                    let result: Result<Int, ComicError>? = if case .failure(let error) = indexed { .failure(error) } else { nil }
                    outcomes.append((index, Outcome(path: path, result: result, unchanged: true)))
                    continue
                }
                do throws(ComicError) {
                    let (listing, listedIdentity) = try pool.list(path, limits: limits)
                    listed.append((file, listedIdentity, .success(listing)))
                    outcomes.append((index, Outcome(path: path, result: .success(listing.pages.count))))
                } catch {
                    listed.append((file, identity, .failure(error)))
                    outcomes.append((index, Outcome(path: path, result: .failure(error))))
                }
            }
            state.storeListings(listed)
            for (index, outcome) in outcomes { emitter.store(index, outcome) }
        }
    }
}

import Foundation
import InkyArchive
import InkyCore
import InkyStore
import InkyWorker

/// `inkyfs index`: lists every comic of a library whose index entry is missing or stale, in
/// parallel workers, and stores the results under the same keys the mount looks up.
public enum LibraryIndexer {
    public struct Outcome: Sendable {
        public var path: String
        /// nil when the index entry was already current.
        public var result: Result<Int, ComicError>?
    }

    /// The comic files the mount shows as directories (archives and PDFs, not image folders).
    public static func comicFiles(in library: String) throws(ComicError) -> [String] {
        // The walk never follows a link: a regular file now is one, whatever it was then.
        try LibraryWalk.comics(in: library).filter { path in
            var info = stat()
            return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && ComicFiles.isComicFile((path as NSString).lastPathComponent)
        }
    }

    /// Indexes `paths`; `progress` gets every outcome in order, one call at a time.
    public static func index(_ paths: [String], state: StateDatabase, pool: WorkerPool, limits: ComicLimits,
                             progress: @escaping @Sendable (Int, Outcome) -> Void) {
        let emitter = OrderedDelivery<Outcome>(count: paths.count, deliver: progress)
        DispatchQueue.concurrentPerform(iterations: paths.count) { index in
            let path = paths[index]
            guard case .success(let identity) = FileIdentity.of(path) else {
                emitter.store(index, Outcome(path: path, result: .failure(.io(path: path, errno: ENOENT, detail: "vanished"))))
                return
            }
            if let indexed = state.indexedListing(LibraryFile(path: path), identity: identity), LibraryFilesystem.fits(indexed, limits.rendering) {
                emitter.store(index, Outcome(path: path, result: nil))
                return
            }
            let result: Result<ComicListing, ComicError>
            do throws(ComicError) {
                let (listing, listedIdentity) = try pool.list(path, limits: limits)
                result = .success(listing)
                state.storeListing(LibraryFile(path: path), identity: listedIdentity, result)
            } catch {
                result = .failure(error)
                state.storeListing(LibraryFile(path: path), identity: identity, result)
            }
            emitter.store(index, Outcome(path: path, result: result.map(\.pages.count)))
        }
    }
}

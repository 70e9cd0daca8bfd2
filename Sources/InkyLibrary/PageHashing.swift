import Foundation
import InkyCore
import InkyStore
import InkyVault
import InkyWorker
import Synchronization

/// The page hashes `DuplicateFinder` compares to find one issue in two containers (a CBR and a
/// CBZ of the same scan). Hashing reads every page, so only comics that can match are hashed:
/// two comics with the same pages have the same page count and the same size for every page,
/// which their listings in the index already tell for free. Hashes are made in workers' reads
/// (a page is decoded where a hostile archive can do no harm) and kept in the index, so a second
/// run hashes only what changed.
public enum PageHashing {
    /// A comic to hash: its file as indexed and the listing whose pages are read.
    public struct Candidate: Sendable {
        public var path: String
        var identity: FileIdentity
        var listing: ComicListing
    }

    /// The comics that share their page count and every page's size with another comic. A
    /// comic with a page of unknown size (a PDF page rendered on demand) is never a candidate:
    /// its bytes are made here, not found in a container.
    public static func candidates(_ comics: [String], state: StateDatabase, limits: ComicLimits) -> [Candidate] {
        var bySizes: [[Int64]: [Candidate]] = [:]
        for path in comics {
            guard case .success(let identity) = FileIdentity.of(path),
                  case .success(let listing)? = state.indexedListing(LibraryFile(path: path), identity: identity),
                  listing.fits(limits.rendering), !listing.pages.isEmpty, listing.pages.allSatisfy(\.isSizeKnown) else { continue }
            bySizes[listing.pages.map(\.size), default: []].append(Candidate(path: path, identity: identity, listing: listing))
        }
        return bySizes.values.filter { $0.count > 1 }.flatMap { $0 }.sorted { $0.path < $1.path }
    }

    /// Each candidate's page hashes (32 bytes a page, in reading order), from the index or read
    /// now and stored there; a comic whose pages cannot all be read is left out. `progress` gets
    /// each comic once it is done, in order, one call at a time.
    public static func hashes(of candidates: [Candidate], state: StateDatabase, pool: WorkerPool, limits: ComicLimits,
                              progress: @escaping @Sendable (Int, String) -> Void) -> [String: [UInt8]] {
        let results = ResultSlots<[UInt8]>(count: candidates.count)
        let delivery = OrderedDelivery<String>(count: candidates.count, deliver: progress)
        // In batches, each stored in one transaction, as the indexer stores listings.
        let batch = LibraryIndexer.batchSize(for: candidates.count)
        DispatchQueue.concurrentPerform(iterations: (candidates.count + batch - 1) / batch) { number in
            let indices = number * batch ..< min(candidates.count, (number + 1) * batch)
            var made: [(file: LibraryFile, identity: FileIdentity, pages: [UInt8])] = []
            for index in indices {
                let candidate = candidates[index], file = LibraryFile(path: candidate.path)
                if let kept = state.pageHashes(file, identity: candidate.identity), kept.count == 32 * candidate.listing.pages.count {
                    results[index] = kept
                } else if let pages = try? read(candidate, pool: pool, limits: limits) {
                    made.append((file, candidate.identity, pages))
                    results[index] = pages
                }
            }
            state.storePageHashes(made)
            for index in indices { delivery.store(index, candidates[index].path) }
        }
        var byPath: [String: [UInt8]] = [:]
        for (index, candidate) in candidates.enumerated() { byPath[candidate.path] = results[index] }
        return byPath
    }

    /// Reads every page of `candidate` in a worker and hashes it as it arrives.
    static func read(_ candidate: Candidate, pool: WorkerPool, limits: ComicLimits) throws(ComicError) -> [UInt8] {
        let pages = candidate.listing.pages
        let entries = pages.map(EntryRequest.init)
        var digests: [PageSource: [UInt8]] = [:]
        var failure: ComicError?
        try pool.read(candidate.path, identity: candidate.identity, entries: entries, limits: limits) { source, result in
            switch result {
            case .success(let bytes):
                do throws(CryptoError) { digests[source] = try SHA256Hasher.hash(bytes) } catch {
                    failure = .io(path: candidate.path, errno: EIO, detail: "cannot hash a page: \(error)")
                }
            case .failure(let error): failure = error
            }
        }
        if let failure { throw failure }
        var joined: [UInt8] = []
        joined.reserveCapacity(32 * pages.count)
        for page in pages {
            guard let digest = digests[page.source] else {
                throw .parserFailed(path: candidate.path, detail: "the worker sent no page \(page.number + 1)")
            }
            joined += digest
        }
        return joined
    }
}

/// One result slot per item, filled from several threads.
final class ResultSlots<Value: Sendable>: Sendable {
    private let values: Mutex<[Value?]>

    init(count: Int) { values = Mutex(Array(repeating: nil, count: count)) }

    subscript(index: Int) -> Value? {
        get { values.withLock { $0[index] } }
        set { values.withLock { $0[index] = newValue } }
    }
}

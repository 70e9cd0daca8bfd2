import Foundation
import InkyCore

extension WorkerPool {
    /// A pool for a command line: one worker per core, quiet, generous timeout.
    public static func forCommandLine(timeout: Double = 60) -> WorkerPool {
        WorkerPool(.init(maxWorkers: max(1, ProcessInfo.processInfo.activeProcessorCount),
                         timeout: timeout, discardWorkerOutput: true))
    }

    /// Lists one comic in a worker and sums it up; never throws, because a bad comic (even
    /// one that crashes the parser) is a result.
    public func summarize(_ path: String, limits: ComicLimits = .default) -> ComicSummary {
        do throws(ComicError) {
            let (listing, _) = try list(path, limits: limits)
            if listing.pages.isEmpty {
                return ComicSummary(path: path, format: listing.format, error: .noPages(path: path))
            }
            return ComicSummary(path: path, listing: listing)
        } catch {
            return ComicSummary(path: path, format: ArchiveFormat.sniff(path: path), error: error)
        }
    }

    /// Sums up many comics, as many at once as there are workers. `emit` gets each result in
    /// the order of `paths` (so output reads like the library), as soon as all before it are in,
    /// one call at a time.
    public func summarize(_ paths: [String], limits: ComicLimits = .default, emit: @escaping @Sendable (Int, ComicSummary) -> Void) {
        let emitter = OrderedDelivery<ComicSummary>(count: paths.count, deliver: emit)
        DispatchQueue.concurrentPerform(iterations: paths.count) { index in
            emitter.store(index, summarize(paths[index], limits: limits))
        }
    }
}

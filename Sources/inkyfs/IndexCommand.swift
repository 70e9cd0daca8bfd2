import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyLibrary
import InkyStore
import InkyWorker
import Synchronization

struct IndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "List every comic of a library ahead of time, so mounts open instantly.",
        discussion: """
            Comics whose file (path, size, mtime, inode) is unchanged since they were indexed are \
            skipped; the rest are listed in worker processes, one per core. The mount indexes lazily \
            too; this just does it up front. Ends with a summary and the comics that failed.
            """
    )

    @Argument(help: "The library folder.")
    var library: String

    @OptionGroup var stateOptions: StateOptions
    @OptionGroup var limitOptions: LimitOptions

    func run() throws {
        let library = absolutePath(self.library)
        let comics = try Self.comics(in: library)
        let state = stateOptions.open()
        let tally = IndexTally(total: comics.count)
        let started = Date()
        Self.index(comics, into: state, limits: limitOptions.limits) { tally.add($0) }
        tally.finish(seconds: Date().timeIntervalSince(started), library: library, database: state.path)
        if tally.failures.count == comics.count && !comics.isEmpty { throw ExitCode(ExitStatus.failed.rawValue) }
    }

    static func comics(in library: String) throws -> [String] {
        do throws(ComicError) { return try LibraryIndexer.comicFiles(in: library) } catch { throw CommandFailure(.refused, error.message) }
    }

    /// Indexes `comics` in workers, one per core (unchanged ones cost nothing); `outcome` gets
    /// each result, one at a time, in order.
    static func index(_ comics: [String], into state: StateDatabase, limits: ComicLimits,
                      outcome: @escaping @Sendable (LibraryIndexer.Outcome) -> Void) {
        let pool = WorkerPool.forCommandLine()
        defer { pool.shutdown() }
        LibraryIndexer.index(comics, state: state, pool: pool, limits: limits) { _, result in outcome(result) }
    }
}

/// Counts and the progress line of an index run (called one outcome at a time, in order).
final class IndexTally: Sendable {
    private let progress: ProgressLine
    private let total: Int
    private let started = Date()
    private struct Counts {
        var done = 0, listed = 0, unchanged = 0
        var failures: [(String, ComicError)] = []
    }
    private let counts = Mutex(Counts())
    var failures: [(String, ComicError)] { counts.withLock { $0.failures } }

    init(total: Int) {
        self.total = total
        progress = ProgressLine(total: total)
    }

    func add(_ outcome: LibraryIndexer.Outcome) {
        let done = counts.withLock { counts in
            counts.done += 1
            switch outcome.result {
            case nil: counts.unchanged += 1
            case .success?: counts.listed += 1
            case .failure(let error)?:
                if outcome.unchanged { counts.unchanged += 1 } else { counts.listed += 1 }
                counts.failures.append((outcome.path, error))
            }
            return counts.done
        }
        let elapsed = max(0.001, Date().timeIntervalSince(started))
        let rate = Double(done) / elapsed
        let remaining = rate > 0 ? Double(total - done) / rate : 0
        progress.update(done: done - 1, current: outcome.path, note: String(format: "%.0f comics/s, ETA %.0f s", rate, remaining))
    }

    /// Takes the progress line off the terminal.
    func clear() { progress.clear() }

    func finish(seconds: Double, library: String, database: String) {
        progress.clear()
        let counts = counts.withLock { $0 }
        print(String(format: "indexed %d comics in %.1f s: %d listed, %d unchanged, %d failed (%@)",
                     total, seconds, counts.listed, counts.unchanged, counts.failures.count, database))
        for (path, error) in counts.failures {
            let name = path.hasPrefix(library + "/") ? String(path.dropFirst(library.count + 1)) : path
            print("  failed: \(name): \(error.message.components(separatedBy: ": ").dropFirst().joined(separator: ": "))")
        }
    }
}

import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyWorker
import Synchronization

struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List every comic of a library with its format and page count, or why it cannot be read.",
        discussion: """
            Comics are archive files with a comic or archive extension (.cbz .cbr .cb7 .cbt .zip \
            .rar .7z .tar ...; the content decides the real format) and folders holding only images. \
            Archives are parsed in worker processes, one per core, so a hostile file costs only its \
            own line. Ends with a summary line. Exits 0 even when some comics are broken: that is a \
            finding, not a failure of the scan.
            """
    )

    @Argument(help: "The library folder (or a single comic).")
    var library: String

    @Flag(help: "Print JSON: an array of comics (the shape is in docs/json-output.md).")
    var json = false

    @OptionGroup var limitOptions: LimitOptions

    func run() throws {
        let comics: [String]
        do throws(ComicError) {
            comics = try LibraryWalk.comics(in: library, followingFileLinks: true)
        } catch {
            throw CommandFailure(.refused, error.message)
        }
        let pool = WorkerPool.forCommandLine()
        defer { pool.shutdown() }
        let report = ScanReport(total: comics.count, library: library, json: json)
        pool.summarize(comics, limits: limitOptions.limits) { index, summary in report.add(index, summary, next: comics[safe: index + 1]) }
        report.finish()
    }
}

/// Prints scan results as they arrive, with a progress line on a terminal.
final class ScanReport: Sendable {
    private let progress: ProgressLine
    private let library: String
    private let json: Bool
    private let summaries = Mutex<[ComicSummary]>([])

    init(total: Int, library: String, json: Bool) {
        progress = ProgressLine(total: total)
        self.library = library
        self.json = json
    }

    /// Called in library order, one call at a time.
    func add(_ index: Int, _ summary: ComicSummary, next: String?) {
        summaries.withLock { $0.append(summary) }
        progress.clear()
        if !json { print(SummaryText.scanLine(summary, library: library)) }
        if let next { progress.update(done: index + 1, current: next) }
    }

    func finish() {
        progress.clear()
        if json {
            try? JSONOutput.print(summaries.withLock { $0 })
        } else {
            print(SummaryText.scanTotals(summaries.withLock { $0 }))
        }
    }
}

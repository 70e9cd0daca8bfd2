import ArgumentParser
import Foundation
import InkyArchive
import InkyCore

struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List every comic of a library with its format and page count, or why it cannot be read.",
        discussion: """
            Comics are archive files with a comic or archive extension (.cbz .cbr .cb7 .cbt .zip \
            .rar .7z .tar …; the content decides the real format) and folders holding only images. \
            Ends with a summary line. Exits 0 even when some comics are broken: that is a finding, \
            not a failure of the scan.
            """
    )

    @Argument(help: "The library folder (or a single comic).")
    var library: String

    @Flag(help: "Print JSON: an array of comics (the shape is in the README).")
    var json = false

    @OptionGroup var limitOptions: LimitOptions

    func run() throws {
        let comics: [String]
        do throws(ComicError) {
            comics = try LibraryWalk.comics(in: library)
        } catch {
            throw ValidationError(error.message)
        }
        let progress = ProgressLine(total: comics.count)
        var summaries: [ComicSummary] = []
        for (done, path) in comics.enumerated() {
            progress.update(done: done, current: path)
            let summary = LibraryWalk.summarize(path, limits: limitOptions.limits)
            summaries.append(summary)
            if !json {
                progress.clear()
                print(SummaryText.scanLine(summary, library: library))
            }
        }
        progress.clear()
        if json {
            try JSONOutput.print(summaries)
        } else {
            print(SummaryText.scanTotals(summaries))
        }
    }
}

import ArgumentParser
import InkyCommandLine
import InkyCore
import InkyWorker

struct PagesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pages",
        abstract: "Show a comic's pages in reading order, as the mount names them.",
        discussion: """
            Lists the page names (001.jpg, ...), the original path inside the archive and the size. \
            Entries that are left out for a reason worth knowing (unsafe names, oversized, \
            encrypted) are listed after the pages. Exits 1 when the comic cannot be read.
            """
    )

    @Argument(help: "A comic archive or a folder of images.")
    var comic: String

    @Flag(help: "Print JSON (the shape is in docs/json-output.md).")
    var json = false

    @OptionGroup var limitOptions: LimitOptions

    func run() throws {
        let pool = WorkerPool.forCommandLine()
        defer { pool.shutdown() }
        let summary = pool.summarize(comic, limits: limitOptions.limits)
        if json {
            try JSONOutput.print(summary)
        } else {
            print(SummaryText.pages(summary), terminator: "")
        }
        if summary.error != nil { throw ExitCode(ExitStatus.failed.rawValue) }
    }
}

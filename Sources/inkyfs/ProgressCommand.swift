import ArgumentParser
import Foundation
import InkyStore

struct ProgressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "progress",
        abstract: "Show the comics you are reading, most recent first: page k of n, percent, bookmarks.",
        discussion: "Pages read through a mount are recorded (not prefetched ones). A comic whose last page was read is finished; --all shows those too."
    )

    @Flag(help: "Include finished comics.")
    var all = false

    @Flag(help: "Print JSON (an array; pages are 1-based).")
    var json = false

    @OptionGroup var stateOptions: StateOptions

    func run() throws {
        let rows = stateOptions.open().progress(includeFinished: all)
        if json {
            try JSONOutput.print(rows.map(ProgressJSON.init))
            return
        }
        if rows.isEmpty { print(all ? "nothing read yet" : "nothing in progress (--all shows finished comics)") }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        for row in rows {
            let state = row.isFinished ? "finished" : "page \(row.lastPage + 1) of \(row.pageCount)  \(row.percent)%"
            let marks = row.bookmarks.isEmpty ? "" : "  bookmarks: " + row.bookmarks.map { String($0 + 1) }.joined(separator: ", ")
            print("\(formatter.string(from: row.updatedAt))  \(state.padding(toLength: 20, withPad: " ", startingAt: 0))  \(row.path)\(marks)")
        }
    }
}

/// The documented `progress --json` shape: 1-based pages, ISO 8601 time.
struct ProgressJSON: Encodable {
    var path: String
    var page: Int
    var pageCount: Int
    var percent: Int
    var finished: Bool
    var pagesSeen: Int
    var updatedAt: String
    var bookmarks: [Int]

    init(_ row: ReadingProgress) {
        path = row.path
        page = row.lastPage + 1
        pageCount = row.pageCount
        percent = row.percent
        finished = row.isFinished
        pagesSeen = row.pagesSeen.count
        updatedAt = ISO8601DateFormatter().string(from: row.updatedAt)
        bookmarks = row.bookmarks.map { $0 + 1 }
    }
}

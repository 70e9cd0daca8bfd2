import ArgumentParser
import Foundation
import InkyCommandLine
import InkyStore

struct ProgressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "progress",
        abstract: "Show the comics you are reading, most recent first: page k of n, percent, bookmarks.",
        discussion: """
            What you read through a mount is recorded: a page counts once read to its end, a comic once two \
            of its pages were read within 5 minutes of each other. Thumbnailers, file managers, file, cp and \
            other users' reads never count. A comic is finished once its last page and three quarters of its \
            pages were seen; --all shows those too. Correct it by hand:
              inkyfs progress forget ~/Comics/Issue\\ 001.cbz       (no longer in progress; bookmarks stay)
              inkyfs progress set ~/Comics/Issue\\ 001.cbz 12       (at page 12, pages count from 1)
            or remove its link in Continue Reading/ under the mount (rm), which forgets it as progress forget does.
            Comics no longer where they were read (a library moved, removed, or on a disk not plugged in) are left \
            out of the list and counted under it; --missing lists them, and
              inkyfs progress forget --missing                     (forgets them all)
            """
    )

    enum Action: String, ExpressibleByArgument, CaseIterable { case forget, set }

    @Argument(help: "forget or set; nothing: list.")
    var action: Action?

    @Argument(help: "The comic archive (its path in the library).")
    var comic: String?

    @Argument(help: "With set: the page, from 1.")
    var page: Int?

    @Flag(help: "Include finished comics.")
    var all = false

    @Flag(help: "Print JSON (an array; pages are 1-based).")
    var json = false

    @Flag(help: "Only comics no longer found where they were read; with forget, forget them all.")
    var missing = false

    @OptionGroup var stateOptions: StateOptions

    func validate() throws {
        if missing && action == .set { throw ValidationError("--missing goes with forget or a list, not set") }
        if missing && comic != nil { throw ValidationError("forget --missing forgets every comic not found: name none") }
        if action != nil && comic == nil && !(action == .forget && missing) {
            throw ValidationError("\(action!.rawValue) needs the comic" + (action == .forget ? " (or --missing)" : ""))
        }
        if action == .set && page == nil { throw ValidationError("set needs the page number") }
        if action != .set && page != nil { throw ValidationError("only set takes a page") }
        if let page, page < 1 { throw ValidationError("pages count from 1") }
    }

    func run() throws {
        if let action, let comic { return try correct(action, absolutePath(comic)) }
        if action == .forget { return try forgetMissing() }
        // A comic is listed where it is (or, with --missing, where it is not): what it was read as
        // stays in the state until forgotten, since its disk may only be unplugged.
        let (found, gone) = Self.whereRead(stateOptions.open().progress(includeFinished: all))
        let rows = missing ? gone : found
        let notFound = missing ? 0 : gone.count
        defer {
            if notFound > 0 {
                let count = notFound == 1 ? "1 comic" : "\(notFound) comics"
                FileHandle.standardError.write(Data(("inkyfs: not listed: \(count) no longer where read (a library moved, removed or not "
                                                     + "mounted); inkyfs progress --missing lists, inkyfs progress forget --missing forgets\n").utf8))
            }
        }
        if json {
            try JSONOutput.print(rows.map(ProgressJSON.init))
            return
        }
        if rows.isEmpty {
            print(missing ? "every comic read is where it was read" : all ? "nothing read yet" : "nothing in progress (--all shows finished comics)")
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        for row in rows {
            let state = row.isFinished ? "finished" : "page \(row.lastPage + 1) of \(row.pageCount)  \(row.percent)%"
            let marks = row.bookmarks.isEmpty ? "" : "  bookmarks: " + row.bookmarks.map { String($0 + 1) }.joined(separator: ", ")
            print("\(formatter.string(from: row.updatedAt))  \(state.padding(toLength: 20, withPad: " ", startingAt: 0))  \(row.path)\(marks)")
        }
    }
}

extension ProgressCommand {
    /// `rows` split by whether each comic is still where it was read: the one test of "missing"
    /// for the list, `--missing` and `forget --missing`.
    private static func whereRead(_ rows: [ReadingProgress]) -> (found: [ReadingProgress], notFound: [ReadingProgress]) {
        var found: [ReadingProgress] = []
        var notFound: [ReadingProgress] = []
        for row in rows {
            if FileManager.default.fileExists(atPath: row.path) { found.append(row) } else { notFound.append(row) }
        }
        return (found, notFound)
    }

    /// Forgets the progress of every comic not found where it was read, finished or not.
    private func forgetMissing() throws {
        let state = stateOptions.open()
        let gone = Self.whereRead(state.progress(includeFinished: true)).notFound
        for row in gone { _ = try state.forgetProgress(row.path) }
        print(gone.isEmpty ? "every comic read is where it was read: nothing forgotten"
              : "forgot where you were in \(gone.count) \(gone.count == 1 ? "comic" : "comics") not found:\n"
                + gone.map { "  " + $0.path }.joined(separator: "\n"))
    }

    private func correct(_ action: Action, _ path: String) throws {
        let state = stateOptions.open()
        switch action {
        case .forget:
            guard try state.forgetProgress(path) else { throw CommandFailure(.failed, "\(comic ?? path): no reading progress to forget") }
            print("forgot where you were in \(path)")
        case .set:
            guard FileManager.default.fileExists(atPath: path) else { throw CommandFailure(.refused, "\(comic ?? path): no such comic") }
            guard let count = state.knownPageCount(path) else {
                throw CommandFailure(.refused, "\(path): its page count is not known yet; list it once (open it through a mount, "
                                     + "or run: inkyfs index LIBRARY)")
            }
            let page = page!
            guard page <= count else { throw CommandFailure(.refused, "\(path) has \(count) pages: there is no page \(page)") }
            try state.setProgress(path, page: page - 1, pageCount: count)
            print("\(path): page \(page) of \(count)")
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

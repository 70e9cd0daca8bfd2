import ArgumentParser
import Foundation
import InkyCommandLine
import InkyStore

struct BookmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookmark",
        abstract: "Add, remove or list bookmarks of a comic (pages count from 1).",
        discussion: """
            Examples:
              inkyfs bookmark add ~/Comics/Issue\\ 001.cbz 12
              inkyfs bookmark remove ~/Comics/Issue\\ 001.cbz 12     (no page: all of that comic)
              inkyfs bookmark list                                 (every comic's bookmarks)
            """
    )

    enum Action: String, ExpressibleByArgument, CaseIterable { case add, remove, list }

    @Argument(help: "add, remove or list.")
    var action: Action

    @Argument(help: "The comic archive (its path in the library).")
    var comic: String?

    @Argument(help: "The page, from 1.")
    var page: Int?

    @Flag(help: "With list: print JSON, an array of { path, bookmarks: [pages from 1] }.")
    var json = false

    @OptionGroup var stateOptions: StateOptions

    struct Marked: Encodable {
        var path: String
        var bookmarks: [Int]
    }

    func validate() throws {
        if json && action != .list { throw ValidationError("--json goes with list") }
        if action != .list && comic == nil { throw ValidationError("\(action.rawValue) needs the comic") }
        if action == .add && page == nil { throw ValidationError("add needs the page number") }
        if let page, page < 1 { throw ValidationError("pages count from 1") }
    }

    func run() throws {
        let state = stateOptions.open()
        let path = comic.map(absolutePath)
        switch action {
        case .add:
            guard let path, FileManager.default.fileExists(atPath: path) else { throw CommandFailure(.refused, "\(comic ?? ""): no such comic") }
            // Refused only when the page count is known (the comic was listed by a mount or `index`).
            if let count = state.knownPageCount(path), page! > count {
                throw CommandFailure(.refused, "\(path) has \(count) pages: there is no page \(page!)")
            }
            try state.addBookmark(path, page: page! - 1)
        case .remove:
            let removed = try state.removeBookmark(path!, page: page.map { $0 - 1 })
            if removed == 0 { throw CommandFailure(.failed, "no such bookmark") }
        case .list:
            // Every bookmarked comic, also those never read through a mount.
            let marked = path.map { [($0, state.bookmarks($0))] } ?? state.allBookmarks().sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            let shown = marked.filter { !$0.1.isEmpty }.map { Marked(path: $0.0, bookmarks: $0.1.map { $0 + 1 }) }
            if json {
                try JSONOutput.print(shown)
                return
            }
            for comic in shown { print("\(comic.path): " + comic.bookmarks.map(String.init).joined(separator: ", ")) }
        }
    }
}

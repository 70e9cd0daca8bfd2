import ArgumentParser
import Foundation
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

    @OptionGroup var stateOptions: StateOptions

    func validate() throws {
        if action != .list && comic == nil { throw ValidationError("\(action.rawValue) needs the comic") }
        if action == .add && page == nil { throw ValidationError("add needs the page number") }
        if let page, page < 1 { throw ValidationError("pages count from 1") }
    }

    func run() throws {
        let state = stateOptions.open()
        let path = comic.map(absolutePath)
        switch action {
        case .add:
            guard let path, FileManager.default.fileExists(atPath: path) else { throw ValidationError("\(comic ?? ""): no such comic") }
            try state.addBookmark(path, page: page! - 1)
        case .remove:
            let removed = try state.removeBookmark(path!, page: page.map { $0 - 1 })
            if removed == 0 { throw ValidationError("no such bookmark") }
        case .list:
            let rows = state.progress(includeFinished: true).filter { path == nil || $0.path == path }
            let marked = path.map { [($0, state.bookmarks($0))] } ?? rows.map { ($0.path, $0.bookmarks) }
            for (comic, pages) in marked where !pages.isEmpty {
                print("\(comic): " + pages.map { String($0 + 1) }.joined(separator: ", "))
            }
        }
    }
}

import ArgumentParser
import Foundation
import InkyCore
import InkyLibrary
import InkyWorker

struct DuplicatesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "duplicates",
        abstract: "Find comics of a library that are the same.",
        discussion: """
            Indexes the library first (as `inkyfs index`: unchanged comics cost nothing), then groups \
            comics with identical bytes, `NAME (1).cbz`-style copies beside `NAME.cbz`, and comics whose \
            tags (ComicInfo.xml, CoMet, ComicBookInfo) name the same series, volume and number \
            ("possible": look before you delete). The comic to keep is listed first. Nothing is moved \
            or deleted.
            """
    )

    @Argument(help: "The library folder (default: the current folder).")
    var library: String = "."

    @Flag(help: "Print the groups as JSON: [{\"kind\": \"identical|copy|possible\", \"comics\": [paths]}].")
    var json = false

    @OptionGroup var stateOptions: StateOptions
    @OptionGroup var limitOptions: LimitOptions

    func run() throws {
        let library = absolutePath(self.library)
        let comics = try IndexCommand.comics(in: library)
        let state = stateOptions.open()
        let tally = IndexTally(total: comics.count)
        IndexCommand.index(comics, into: state, limits: limitOptions.limits) { tally.add($0) }
        tally.clear()
        let groups = DuplicateFinder.find(comics, metadata: state.allIndexedMetadata())
        if json {
            try JSONOutput.print(groups)
            return
        }
        if groups.isEmpty { print("no duplicates among \(comics.count) comics") }
        for group in groups {
            let title = switch group.kind {
            case .identical: "identical bytes"
            case .copy: "a copy by name"
            case .possible: "possibly the same issue (same series, volume and number)"
            }
            print("\(title):")
            for (index, comic) in group.comics.enumerated() {
                let name = comic.hasPrefix(library + "/") ? String(comic.dropFirst(library.count + 1)) : comic
                print("  \(index == 0 ? "keep" : "    ") \(name)")
            }
        }
    }
}

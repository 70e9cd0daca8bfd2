import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyLibrary
import InkyStore
import InkyWorker

struct DuplicatesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "duplicates",
        abstract: "Find comics of a library that are the same, and move the extra copies away.",
        discussion: """
            Indexes the library first (as `inkyfs index`: unchanged comics cost nothing), then groups \
            comics with identical bytes; the same pages in another container (a CBR and a CBZ of one \
            scan: every page's SHA-256 alike, in the same order; pages are read and hashed once, only \
            for comics whose page sizes match another's, and the hashes kept in the index); \
            `NAME (1).cbz`-style copies beside `NAME.cbz`; and comics whose tags (ComicInfo.xml, CoMet, \
            ComicBookInfo) name the same series, volume and number ("possible": look before you \
            delete).

            The comic to keep is listed first, the best copy: tagged (ComicInfo.xml, CoMet.xml or \
            ComicBookInfo) over known by its file name alone; then filed in its series' folder (a \
            folder on its path names its series: Batman/, Batman (2011)/, Batman v2/) over loose; then \
            more pages over fewer; then the shortest file name; then the oldest file.

            --move-to DIR moves every other comic of each group into DIR, at its path under the \
            library, never the one a group keeps and never over an existing file; it prints what it \
            would do unless --yes is given. A move within one filesystem renames; across filesystems \
            the copy is synced, read back and compared by SHA-256 before the original is removed. \
            "possible" groups move only with --move-possible. Nothing is ever deleted.
            """
    )

    @Argument(help: "The library folder (default: the current folder).")
    var library: String = "."

    @Flag(help: ArgumentHelp("Print JSON: [{\"kind\": \"identical|same-pages|copy|possible\", \"comics\": [paths]}]; "
                             + "with --move-to, {\"groups\": [...], \"moves\": [{\"from\", \"to\", \"moved\", \"error\"}]}."))
    var json = false

    @Option(help: ArgumentHelp("Move the extra copies into this folder (outside the library).", valueName: "dir"))
    var moveTo: String?

    @Flag(help: "Move them (without it, --move-to only prints what it would move).")
    var yes = false

    @Flag(help: "Move the extra comics of \"possible\" groups too.")
    var movePossible = false

    @OptionGroup var stateOptions: StateOptions
    @OptionGroup var limitOptions: LimitOptions

    func validate() throws {
        if yes && moveTo == nil { throw ValidationError("--yes goes with --move-to") }
        if movePossible && moveTo == nil { throw ValidationError("--move-possible goes with --move-to") }
    }

    func run() throws {
        let library = absolutePath(self.library)
        let destination = try moveTo.map { try Self.destination(absolutePath($0), outside: library) }
        let comics = try IndexCommand.comics(in: library)
        let state = stateOptions.open()
        let groups = Self.find(comics, in: library, state: state, limits: limitOptions.limits)
        guard let destination else {
            if json { return try JSONOutput.print(groups) }
            print(groups.isEmpty ? "no duplicates among \(comics.count) comics" : DuplicatesText.groups(groups, library: library))
            return
        }
        let kinds: Set<DuplicateFinder.Kind> = movePossible ? [.identical, .samePages, .copy, .possible] : [.identical, .samePages, .copy]
        let plan = DuplicateMover.plan(groups, kinds: kinds, library: library, destination: destination)
        let outcomes = plan.map { move -> MoveOutcome in
            guard yes else { return MoveOutcome(from: move.from, to: move.to, moved: false, error: nil) }
            do throws(DuplicateMover.Failure) {
                try DuplicateMover.perform(move)
                state.removeFromIndex(LibraryFile(path: move.from))
                return MoveOutcome(from: move.from, to: move.to, moved: true, error: nil)
            } catch {
                return MoveOutcome(from: move.from, to: move.to, moved: false, error: error.description)
            }
        }
        if json {
            try JSONOutput.print(MoveReport(groups: groups, moves: outcomes))
        } else {
            if !groups.isEmpty { print(DuplicatesText.groups(groups, library: library)) }
            print(DuplicatesText.moves(outcomes, dryRun: !yes, groups: groups.count))
        }
        if outcomes.contains(where: { $0.error != nil }) { throw ExitCode(ExitStatus.failed.rawValue) }
    }

    /// Indexes `comics`, hashes the pages of those that may hold another's, and groups them.
    static func find(_ comics: [String], in library: String, state: StateDatabase, limits: ComicLimits) -> [DuplicateFinder.Group] {
        let pool = WorkerPool.forCommandLine()
        defer { pool.shutdown() }
        let tally = IndexTally(total: comics.count)
        LibraryIndexer.index(comics, state: state, pool: pool, limits: limits) { _, outcome in tally.add(outcome) }
        tally.clear()
        let candidates = PageHashing.candidates(comics, state: state, limits: limits)
        let progress = ProgressLine(total: candidates.count)
        let hashes = PageHashing.hashes(of: candidates, state: state, pool: pool, limits: limits) { done, path in
            progress.update(done: done, current: path, note: "hashing pages")
        }
        progress.clear()
        let unread = candidates.map(\.path).filter { hashes[$0] == nil }
        if !unread.isEmpty {
            FileHandle.standardError.write(Data(("inkyfs: the pages of \(unread.count) comic\(unread.count == 1 ? "" : "s") could not all be read, compared"
                + " by bytes, name and tags only: \(unread.prefix(5).joined(separator: ", "))\(unread.count > 5 ? ", ..." : "")\n").utf8))
        }
        let metadata = state.allIndexedMetadata()
        // Pages as the index has them, just listed: asked only of the comics in a group.
        let keeping = DuplicateKeeping(library: library, metadata: metadata) { path in
            guard case .success(let identity) = FileIdentity.of(path),
                  case .success(let listing)? = state.indexedListing(LibraryFile(path: path), identity: identity) else { return nil }
            return listing.pages.count
        }
        return DuplicateFinder.find(comics, metadata: metadata, pageHashes: hashes, keeping: keeping)
    }

    /// The folder extra copies move to: not inside the library, where the next run would find
    /// them again (nor the library itself).
    static func destination(_ folder: String, outside library: String) throws -> String {
        func resolved(_ path: String) -> String {
            guard let real = realpath(path, nil) else { return path }
            defer { free(real) }
            return String(cString: real)
        }
        // The folder may not exist yet: its nearest existing ancestor says where it will be.
        var probe = folder
        while !FileManager.default.fileExists(atPath: probe) && probe != "/" { probe = (probe as NSString).deletingLastPathComponent }
        let resolvedLibrary = resolved(library), resolved = resolved(probe)
        if resolved == resolvedLibrary || resolved.hasPrefix(resolvedLibrary + "/") {
            throw ValidationError("--move-to \(folder) is inside the library \(library): choose a folder outside it")
        }
        return folder
    }
}

struct MoveOutcome: Codable {
    var from: String
    var to: String
    var moved: Bool
    var error: String?
}

struct MoveReport: Codable {
    var groups: [DuplicateFinder.Group]
    var moves: [MoveOutcome]
}

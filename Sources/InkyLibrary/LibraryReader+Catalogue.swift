import Foundation
import InkyCore
import InkyStore

/// The mount's views for a front end: `By Series/`, `By Publisher/`, `Story Arcs/`, `Reading
/// Lists/`, `Recently Added/` from the same index queries and tree builders, `Continue Reading/`
/// from the same reading state, and a search of the index.
extension LibraryReader {
    /// One link of a metadata view, in the view's order.
    public struct ViewLink: Sendable, Equatable {
        public enum Target: Sendable, Equatable {
            case comic(ComicRef)
            /// A folder of another view: `By Publisher/X/` links to `By Series/` folders.
            case folder(MetadataViewKind, String)
        }

        /// The link's name in the mount (`001 Batman #1 (2012)`).
        public var name: String
        public var target: Target
    }

    /// A view's top level: its folders (series, publishers, arcs, lists) or its links (recent).
    public struct ViewListing: Sendable, Equatable {
        public var folders: [String]
        public var links: [ViewLink]
    }

    /// What the view shows at its top; empty without a state database.
    public func view(_ kind: MetadataViewKind) -> ViewListing {
        guard let root = viewRoot(kind) else { return ViewListing(folders: [], links: []) }
        return ViewListing(folders: root.tree.folders.map(\.name), links: root.tree.rootLinks.compactMap(Self.link))
    }

    /// The links of one folder of a view, in its order (a reading list's own); nil for no such folder.
    public func view(_ kind: MetadataViewKind, folder name: String) -> [ViewLink]? {
        guard let root = viewRoot(kind), let catalog else { return nil }
        if let keys = root.keys[name] {
            return catalog.folder(name, keys: keys, seriesViewName: MetadataViewKind.series.folderName)?.links.compactMap(Self.link)
        }
        return root.tree.folder(named: name)?.links.compactMap(Self.link)
    }

    private static func link(_ link: LinkTree.Link) -> ViewLink? {
        switch link.target {
        case .comic(let path):
            return ViewLink(name: link.name, target: .comic(.library(path)))
        case .viewFolder(let path):
            guard let slash = path.firstIndex(of: "/"),
                  let kind = MetadataViewKind.allCases.first(where: { $0.folderName == path[..<slash] }) else { return nil }
            return ViewLink(name: link.name, target: .folder(kind, String(path[path.index(after: slash)...])))
        }
    }

    /// The view's root as the index has it now, made again only when the metadata (or the
    /// reading lists) moved since.
    private func viewRoot(_ kind: MetadataViewKind) -> MetadataViewRoot? {
        guard let catalog else { return nil }
        let stamp = catalog.current().stamp
        let lists = kind == .lists ? readingLists?.current() : nil
        if let kept = roots.withLock({ $0[kind] }), kept.stamp == stamp, kept.lists == (lists?.generation ?? 0) { return kept.root }
        let root = catalog.root(kind, seriesViewName: MetadataViewKind.series.folderName, readingLists: lists?.lists ?? [])
        roots.withLock { $0[kind] = (stamp, lists?.generation ?? 0, root) }
        return root
    }

    /// Comics in progress under this library, most recent first (what `Continue Reading/`
    /// shows), with reads just recorded included.
    public func inProgress() -> [(comic: ComicRef, progress: ReadingProgress)] {
        guard let state = library.state else { return [] }
        library.finishStateWrites()
        return state.progress().compactMap { row in
            guard let comic = relative(row.path).flatMap(comic(at:)) else { return nil }
            return (comic, row)
        }
    }

    /// Records that a reader stands on page `page` (0-based) of the comic (`Continue Reading/`,
    /// `inkyfs progress` and `pse:lastRead` follow): for progress a client reports without
    /// fetching the page (a sync protocol). A reader's own word, so recorded at once, not
    /// weighed as reads are (`ReadingRule`). ERANGE past the end.
    public func recordReading(_ comic: ComicRef, page: Int) -> Result<Void, Errno> {
        guard !comic.isVault else { return .failure(.ENOENT) }
        return library.currentComic(comic).flatMap { state, snapshot in
            guard case .success(let listing) = snapshot.listing, !listing.pages.isEmpty else { return .failure(.ENOENT) }
            guard page >= 0, page < listing.pages.count else { return .failure(.ERANGE) }
            _ = state.moveTo(page: page)
            library.record(pages: [page], of: listing.pages.count, comic: state)
            return .success(())
        }
    }

    /// Where a reader is in each of these comics (finished ones included); absent: never opened.
    public func progress(of comics: [ComicRef]) -> [ComicRef: ReadingProgress] {
        guard let state = library.state, !comics.isEmpty else { return [:] }
        let paths = comics.compactMap { comic -> String? in
            if case .library(let path) = comic { return libraryPath + "/" + path }
            return nil
        }
        var found: [ComicRef: ReadingProgress] = [:]
        for (path, row) in state.progress(of: paths) {
            if let relative = relative(path) { found[.library(relative)] = row }
        }
        return found
    }

    /// Comics whose series, title or path holds every word of `text`, at most `limit`.
    public func search(_ text: String, limit: Int) -> [ComicRef] {
        guard let state = library.state else { return [] }
        return state.searchMetadata(text, under: libraryPath, limit: limit).compactMap { row in
            relative(row.file.path).flatMap(comic(at:))
        }
    }

    /// A path of the index made relative to the library; nil for one outside it.
    private func relative(_ path: String) -> String? {
        let prefix = libraryPath + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : nil
    }
}

import Foundation
import InkyCore
import InkyLibrary

/// The catalog's feeds, made from the library core: navigation feeds that mirror the mount
/// (its folders and views) and acquisition entries for comics, 50 to a page with `rel="next"`.
/// Every call blocks (comics are described, listed if need be): run it `OffLoop`.
struct OPDSCatalog: Sendable {
    let reader: LibraryReader
    static let pageSize = 50

    /// One thing a feed lists before it is made into an entry: comics are described only on
    /// the page that shows them.
    enum Item {
        case navigation(id: String, title: String, href: String, kind: AtomFeed.Kind, summary: String? = nil)
        case comic(ComicRef)
    }

    /// The top: the library's folders, then each view, as the mount's root shows them.
    func root() -> AtomFeed {
        var items: [Item] = [.navigation(id: "urn:inkyfs:folders", title: "Folders", href: OPDSPaths.folders, kind: .acquisition,
                                         summary: "The library's folders, as the mount shows them")]
        items.append(.navigation(id: "urn:inkyfs:continue", title: "Continue Reading", href: OPDSPaths.continueReading,
                                 kind: .acquisition, summary: "Comics in progress, most recent first"))
        for kind in MetadataViewKind.allCases {
            items.append(.navigation(id: "urn:inkyfs:view:\(kind.rawValue)", title: kind.folderName,
                                     href: OPDSPaths.link(OPDSPaths.view, [("kind", kind.rawValue)]),
                                     kind: kind == .recent ? .acquisition : .navigation))
        }
        return feed(id: "urn:inkyfs:root", title: "inkyfs: \((reader.libraryPath as NSString).lastPathComponent)",
                    kind: .navigation, path: OPDSPaths.root, query: [], items: items, page: 1)
    }

    /// A library folder: its sub-folders, then its comics. nil for no such folder.
    func folder(_ path: String, page: Int) -> AtomFeed? {
        guard case .success(let entries) = reader.folder(path) else { return nil }
        let items: [Item] = entries.map { entry in
            switch entry {
            case .folder(let name, let folder):
                .navigation(id: "urn:inkyfs:folder:" + OPDSPaths.encode(folder), title: name,
                            href: OPDSPaths.link(OPDSPaths.folders, [("path", folder)]), kind: .acquisition)
            case .comic(_, let comic): .comic(comic)
            }
        }
        let title = path.isEmpty ? "Folders" : String(path.split(separator: "/").last ?? "")
        return feed(id: "urn:inkyfs:folder:" + OPDSPaths.encode(path), title: title, kind: .acquisition,
                    path: OPDSPaths.folders, query: path.isEmpty ? [] : [("path", path)], items: items, page: page)
    }

    /// A view's top (its folders, or Recently Added's comics), or one of its folders.
    func view(_ kind: MetadataViewKind, folder: String?, page: Int) -> AtomFeed? {
        let links: [LibraryReader.ViewLink]
        var items: [Item] = []
        if let folder {
            guard let found = reader.view(kind, folder: folder) else { return nil }
            links = found
        } else {
            let listing = reader.view(kind)
            items = listing.folders.map { name in
                .navigation(id: "urn:inkyfs:view:\(kind.rawValue):" + OPDSPaths.encode(name), title: name,
                            href: OPDSPaths.link(OPDSPaths.view, [("kind", kind.rawValue), ("folder", name)]),
                            kind: kind == .publishers ? .navigation : .acquisition)
            }
            links = listing.links
        }
        items += links.map { link in
            switch link.target {
            case .comic(let comic): .comic(comic)
            case .folder(let other, let name):
                .navigation(id: "urn:inkyfs:view:\(other.rawValue):" + OPDSPaths.encode(name), title: name,
                            href: OPDSPaths.link(OPDSPaths.view, [("kind", other.rawValue), ("folder", name)]), kind: .acquisition)
            }
        }
        let kindOfFeed: AtomFeed.Kind = items.contains { if case .comic = $0 { true } else { false } } ? .acquisition : .navigation
        var query = [("kind", kind.rawValue)]
        if let folder { query.append(("folder", folder)) }
        return feed(id: "urn:inkyfs:view:\(kind.rawValue)" + (folder.map { ":" + OPDSPaths.encode($0) } ?? ""),
                    title: folder ?? kind.folderName, kind: kindOfFeed, path: OPDSPaths.view, query: query, items: items, page: page)
    }

    func continueReading(page: Int) -> AtomFeed {
        feed(id: "urn:inkyfs:continue", title: "Continue Reading", kind: .acquisition, path: OPDSPaths.continueReading,
             query: [], items: reader.inProgress().map { .comic($0.comic) }, page: page)
    }

    /// At most 500 matches, in the index's order.
    func search(_ text: String, page: Int) -> AtomFeed {
        let found = reader.search(text, limit: 500)
        var feed = feed(id: "urn:inkyfs:search:" + OPDSPaths.encode(text), title: "Search: \(text)", kind: .acquisition,
                        path: OPDSPaths.search, query: [("q", text)], items: found.map { .comic($0) }, page: page)
        feed.totalResults = found.count
        return feed
    }

    /// The feed of page `page` (from 1) of `items`, with `next`/`previous`/`first`/`last` links.
    private func feed(id: String, title: String, kind: AtomFeed.Kind, path: String, query: [(String, String)],
                      items: [Item], page: Int) -> AtomFeed {
        let pages = max(1, (items.count + Self.pageSize - 1) / Self.pageSize)
        let page = min(max(1, page), pages)
        func href(_ number: Int) -> String { OPDSPaths.link(path, query + (number > 1 ? [("page", String(number))] : [])) }
        let now = HTTPCaching.atomDate(Date())
        var feed = AtomFeed(id: id, title: title, updated: now, kind: kind, selfHref: href(page))
        if page < pages { feed.links.append(AtomFeed.Link(rel: "next", href: href(page + 1), type: kind.mediaType)) }
        if page > 1 { feed.links.append(AtomFeed.Link(rel: "previous", href: href(page - 1), type: kind.mediaType)) }
        if pages > 1 {
            feed.links.append(AtomFeed.Link(rel: "first", href: href(1), type: kind.mediaType))
            feed.links.append(AtomFeed.Link(rel: "last", href: href(pages), type: kind.mediaType))
        }
        let shown = items.dropFirst((page - 1) * Self.pageSize).prefix(Self.pageSize)
        let comics = shown.compactMap { if case .comic(let comic) = $0 { comic } else { nil } }
        let progress = reader.progress(of: comics)
        feed.entries = shown.map { item in
            switch item {
            case .navigation(let id, let title, let href, let kind, let summary):
                var entry = AtomFeed.Entry(id: id, title: title, updated: now,
                                           links: [AtomFeed.Link(rel: "subsection", href: href, type: kind.mediaType)])
                entry.content = summary
                return entry
            case .comic(let comic):
                return OPDSEntries.comic(comic, reader: reader, progress: progress[comic], updated: now)
            }
        }
        return feed
    }
}

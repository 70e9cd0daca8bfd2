import Foundation
import InkyCore
import InkyLibrary
import InkyStore

/// A comic's acquisition entry: title, series and number, ComicInfo's summary, cover and
/// thumbnail, the CBZ download and the OPDS-PSE stream link. A comic that cannot be read is an
/// entry saying why, with nothing to download.
enum OPDSEntries {
    static let cbzType = "application/vnd.comicbook+zip"
    static let pseNamespace = "http://vaemendis.net/opds-pse/stream"

    static func comic(_ comic: ComicRef, reader: LibraryReader, progress: ReadingProgress?, updated: String) -> AtomFeed.Entry {
        guard case .library(let path) = comic else { return unavailable("urn:inkyfs:unavailable", "not in the library", updated: updated) }
        let description: LibraryReader.Description
        switch reader.describe(comic) {
        case .success(let value): description = value
        case .failure(let code): return unavailable(id(of: path), "\(path) cannot be read: \(code)", updated: updated)
        }
        var entry = AtomFeed.Entry(id: id(of: path), title: title(description),
                                   updated: HTTPCaching.atomDate(description.identity.modifiedNanoseconds))
        if let problem = description.problem {
            entry.content = "inkyfs cannot show this comic. " + problem
            return entry
        }
        let metadata = description.metadata
        if let publisher = metadata?.publisher { entry.terms.append(("dc:publisher", publisher)) }
        if let language = metadata?.language { entry.terms.append(("dc:language", language)) }
        if let year = metadata?.year { entry.terms.append(("dc:issued", String(year))) }
        entry.summary = reader.summary(comic)
        entry.content = details(description)
        let query = [("path", path)]
        entry.links.append(AtomFeed.Link(rel: "http://opds-spec.org/image", href: OPDSPaths.link(OPDSPaths.cover, query), type: "image/jpeg"))
        entry.links.append(AtomFeed.Link(rel: "http://opds-spec.org/image/thumbnail", href: OPDSPaths.link(OPDSPaths.thumbnail, query),
                                         type: "image/jpeg"))
        var download = AtomFeed.Link(rel: "http://opds-spec.org/acquisition", href: OPDSPaths.link(OPDSPaths.download, query),
                                     type: cbzType, title: "CBZ")
        if let size = description.knownCBZSize { download.attributes.append(("length", String(size))) }
        entry.links.append(download)
        // PSE's template variables stay as they are: a client replaces `{pageNumber}` and `{maxWidth}`.
        var stream = AtomFeed.Link(rel: pseNamespace, href: OPDSPaths.link(OPDSPaths.page, query) + "&page={pageNumber}&width={maxWidth}",
                                   type: "image/jpeg", title: "Read online")
        stream.attributes.append(("pse:count", String(description.pages.count)))
        if let progress {
            stream.attributes.append(("pse:lastRead", String(progress.lastPage)))
            stream.attributes.append(("pse:lastReadDate", HTTPCaching.atomDate(progress.updatedAt)))
        }
        entry.links.append(stream)
        return entry
    }

    /// `Moon Tales #1: Title`, else the name the mount shows.
    static func title(_ description: LibraryReader.Description) -> String {
        guard let metadata = description.metadata, let series = metadata.series else { return description.name }
        var title = series + (metadata.number.map { " #\($0)" } ?? "")
        if let volume = metadata.volume { title += " (\(volume))" }
        if let own = metadata.title { title += ": \(own)" }
        return title
    }

    /// Format and pages, what a reader's detail view shows beside the summary.
    private static func details(_ description: LibraryReader.Description) -> String {
        let format = description.format.map { $0.rawValue.uppercased() + ", " } ?? ""
        return "\(format)\(description.pages.count) pages. \(description.path)"
    }

    static func id(of path: String) -> String { "urn:inkyfs:comic:" + OPDSPaths.encode(path) }

    private static func unavailable(_ id: String, _ why: String, updated: String) -> AtomFeed.Entry {
        var entry = AtomFeed.Entry(id: id, title: "Unavailable comic", updated: updated)
        entry.content = "inkyfs cannot show this comic: \(why)"
        return entry
    }
}

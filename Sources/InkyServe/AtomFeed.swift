import Foundation

/// An OPDS 1.2 catalog feed (Atom) written as text: every value escaped, nothing else
/// interpolated. Links are relative to the server's root, so a client resolves them against
/// the address it used, whatever name or port it reached the server by.
struct AtomFeed {
    enum Kind: String {
        case navigation, acquisition

        var mediaType: String { "application/atom+xml;profile=opds-catalog;kind=\(rawValue)" }
    }

    struct Link {
        var rel: String?
        var href: String
        var type: String?
        var title: String? = nil
        /// Extension attributes (`pse:count`), names written as given, values escaped.
        var attributes: [(name: String, value: String)] = []
    }

    struct Entry {
        var id: String
        var title: String
        var updated: String
        var authors: [String] = []
        /// Plain text (OPDS restricts summary to text).
        var summary: String?
        var content: String?
        var links: [Link] = []
        /// Dublin Core terms: `dc:issued`, `dc:language`, `dc:publisher`.
        var terms: [(name: String, value: String)] = []
    }

    var id: String
    var title: String
    var updated: String
    var kind: Kind
    var selfHref: String
    var links: [Link] = []
    var entries: [Entry] = []
    /// OpenSearch's totals on a search result.
    var totalResults: Int?

    static let namespaces = """
        xmlns="http://www.w3.org/2005/Atom" xmlns:opds="http://opds-spec.org/2010/catalog" \
        xmlns:pse="http://vaemendis.net/opds-pse/ns" xmlns:dc="http://purl.org/dc/terms/" \
        xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"
        """

    var xml: String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<feed \(Self.namespaces)>\n"
        out += "  <id>\(Self.escape(id))</id>\n  <title>\(Self.escape(title))</title>\n  <updated>\(updated)</updated>\n"
        out += "  <author><name>inkyfs</name></author>\n"
        if let totalResults { out += "  <opensearch:totalResults>\(totalResults)</opensearch:totalResults>\n" }
        let own = [Link(rel: "self", href: selfHref, type: kind.mediaType),
                   Link(rel: "start", href: OPDSPaths.root, type: Kind.navigation.mediaType),
                   Link(rel: "search", href: OPDSPaths.openSearch, type: "application/opensearchdescription+xml", title: "Search")]
        for link in own + links { out += "  " + Self.write(link) + "\n" }
        for entry in entries { out += Self.write(entry) }
        return out + "</feed>\n"
    }

    private static func write(_ link: Link) -> String {
        var out = "<link"
        if let rel = link.rel { out += " rel=\"\(escape(rel))\"" }
        out += " href=\"\(escape(link.href))\""
        if let type = link.type { out += " type=\"\(escape(type))\"" }
        if let title = link.title { out += " title=\"\(escape(title))\"" }
        for (name, value) in link.attributes { out += " \(name)=\"\(escape(value))\"" }
        return out + "/>"
    }

    private static func write(_ entry: Entry) -> String {
        var out = "  <entry>\n    <title>\(escape(entry.title))</title>\n    <id>\(escape(entry.id))</id>\n"
        out += "    <updated>\(entry.updated)</updated>\n"
        for author in entry.authors { out += "    <author><name>\(escape(author))</name></author>\n" }
        for (name, value) in entry.terms { out += "    <\(name)>\(escape(value))</\(name)>\n" }
        if let summary = entry.summary { out += "    <summary type=\"text\">\(escape(summary))</summary>\n" }
        if let content = entry.content { out += "    <content type=\"text\">\(escape(content))</content>\n" }
        for link in entry.links { out += "    " + write(link) + "\n" }
        return out + "  </entry>\n"
    }

    /// Text and attribute values: the five XML specials, and characters XML 1.0 cannot hold
    /// (C0 controls but tab and newline, lone surrogates cannot occur in a String) as U+FFFD.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// Where each part of the catalog is, and how a query value is written into a link.
enum OPDSPaths {
    static let root = "/opds"
    static let openSearch = "/opds/search.xml"
    static let search = "/opds/search"
    static let folders = "/opds/folders"
    static let view = "/opds/view"
    static let continueReading = "/opds/continue"
    static let comic = "/opds/comic"
    static let download = "/opds/comic/cbz"
    static let cover = "/opds/comic/cover"
    static let thumbnail = "/opds/comic/thumbnail"
    static let page = "/opds/comic/page"

    /// `path?name=value&...`, each value percent-encoded (only unreserved characters and `/` left as they are).
    static func link(_ path: String, _ query: [(String, String)]) -> String {
        let pairs = query.map { "\($0.0)=\(encode($0.1))" }
        return pairs.isEmpty ? path : path + "?" + pairs.joined(separator: "&")
    }

    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")
}

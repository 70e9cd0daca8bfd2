import Foundation
import FoundationXML

/// An OPDS feed as a client reads it (XMLParser, namespaces on): the feed's links, and each
/// entry's title, content and links with their attributes (`pse:count` by its qualified name).
struct FeedReader {
    struct Link {
        var attributes: [String: String]
        var rel: String? { attributes["rel"] }
        var href: String { attributes["href"] ?? "" }
        var type: String? { attributes["type"] }
    }

    struct Entry {
        var title = ""
        var content = ""
        var summary = ""
        var links: [Link] = []

        func link(_ rel: String) -> Link? { links.first { $0.rel == rel } }
    }

    var title = ""
    var links: [Link] = []
    var entries: [Entry] = []

    func link(_ rel: String) -> Link? { links.first { $0.rel == rel } }

    init?(_ bytes: [UInt8]) {
        let parser = XMLParser(data: Data(bytes))
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = true
        let collector = Collector()
        parser.delegate = collector
        guard parser.parse(), collector.isFeed else { return nil }
        (title, links, entries) = (collector.title, collector.links, collector.entries)
    }

    private final class Collector: NSObject, XMLParserDelegate {
        static let atom = "http://www.w3.org/2005/Atom"
        var isFeed = false
        var title = "", links: [Link] = [], entries: [Entry] = []
        private var entry: Entry?
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String]) {
            text = ""
            guard namespaceURI == Self.atom else { return }
            switch name {
            case "feed": isFeed = true
            case "entry": entry = Entry()
            case "link":
                if entry != nil { entry!.links.append(Link(attributes: attributes)) } else { links.append(Link(attributes: attributes)) }
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard namespaceURI == Self.atom else { return }
            switch name {
            case "entry":
                if let entry { entries.append(entry) }
                entry = nil
            case "title": if entry != nil { entry!.title = text } else { title = text }
            case "content": entry?.content = text
            case "summary": entry?.summary = text
            default: break
            }
        }
    }
}

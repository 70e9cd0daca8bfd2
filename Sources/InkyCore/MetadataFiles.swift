import Foundation

/// The metadata files comics carry, read into `ComicMetadata`: ComicInfo.xml (ComicRack's, what
/// most taggers write), CoMet.xml and ComicBookInfo (JSON in a ZIP's comment). Each answers nil
/// for bytes that are not that format; the fields are cleaned by `sanitized()`.
public enum MetadataFiles {
    public static func comicInfo(_ bytes: [UInt8]) -> ComicMetadata? {
        guard let root = SafeXML.parse(bytes), root.name.caseInsensitiveCompare("ComicInfo") == .orderedSame else { return nil }
        func text(_ name: String) -> String? { root.child(name)?.text }
        func integer(_ name: String) -> Int? { text(name).flatMap { Int($0.trimmingSpaces) } }
        let arcNames = commaSeparated(text("StoryArc"))
        let arcNumbers = commaSeparated(text("StoryArcNumber"))
        let arcs = arcNames.enumerated().map { index, name in
            ComicMetadata.Arc(name: name, number: index < arcNumbers.count ? arcNumbers[index] : nil)
        }
        return ComicMetadata(source: .comicInfo, series: text("Series"), number: text("Number"), volume: integer("Volume"),
                             title: text("Title"), publisher: text("Publisher"), year: integer("Year"),
                             month: integer("Month"), arcs: arcs, pageCount: integer("PageCount"),
                             language: text("LanguageISO"), manga: text("Manga")).sanitized()
    }

    /// CoMet 1.1: `<comet><title/><series/><issue/><volume/><publisher/><date>YYYY-MM-DD</date>…`.
    public static func coMet(_ bytes: [UInt8]) -> ComicMetadata? {
        guard let root = SafeXML.parse(bytes), root.name.caseInsensitiveCompare("comet") == .orderedSame else { return nil }
        func text(_ name: String) -> String? { root.child(name)?.text }
        let date = (text("date") ?? "").trimmingSpaces.split(separator: "-")
        return ComicMetadata(source: .coMet, series: text("series"), number: text("issue"),
                             volume: text("volume").flatMap { Int($0.trimmingSpaces) }, title: text("title"),
                             publisher: text("publisher"), year: date.first.flatMap { Int($0) },
                             month: date.count > 1 ? Int(date[1]) : nil,
                             pageCount: text("pages").flatMap { Int($0.trimmingSpaces) }, language: text("language")).sanitized()
    }

    /// ComicBookInfo 1.0, the JSON ComicBookLover and ComicTagger keep in a ZIP's comment.
    public static func comicBookInfo(_ comment: [UInt8]) -> ComicMetadata? {
        guard comment.count <= 1 << 16, comment.first == UInt8(ascii: "{"),
              let object = try? JSONSerialization.jsonObject(with: Data(comment)) as? [String: Any],
              let info = object["ComicBookInfo/1.0"] as? [String: Any] else { return nil }
        func text(_ key: String) -> String? {
            switch info[key] {
            case let value as String: value
            case let value as NSNumber: value.stringValue
            default: nil
            }
        }
        func integer(_ key: String) -> Int? { text(key).flatMap { Int($0.trimmingSpaces) } }
        return ComicMetadata(source: .comicBookInfo, series: text("series"), number: text("issue"), volume: integer("volume"),
                             title: text("title"), publisher: text("publisher"), year: integer("publicationYear"),
                             month: integer("publicationMonth"), language: text("language")).sanitized()
    }

    static func commaSeparated(_ text: String?) -> [String] {
        (text ?? "").split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
    }
}

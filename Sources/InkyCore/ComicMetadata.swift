/// What a comic says it is: the fields of ComicInfo.xml the views use, or what CoMet, the ZIP
/// comment or the file name tell when there is none. Made by a worker from bytes anyone can
/// write, so it is data only: `sanitized()` bounds every field and drops control characters,
/// and `SafeName` turns a field into a file name (never a path).
public struct ComicMetadata: Sendable, Equatable, Codable {
    public enum Source: String, Sendable, Codable {
        case comicInfo, coMet, comicBookInfo, fileName
    }

    /// One story arc the comic belongs to, with its place in the arc when given.
    public struct Arc: Sendable, Equatable, Codable {
        public var name: String
        public var number: String?

        public init(name: String, number: String? = nil) {
            self.name = name
            self.number = number
        }
    }

    public var source: Source
    public var series: String?
    public var number: String?
    public var volume: Int?
    public var title: String?
    public var publisher: String?
    public var year: Int?
    public var month: Int?
    public var arcs: [Arc]
    public var pageCount: Int?
    public var language: String?
    /// ComicInfo's Manga value ("Yes", "YesAndRightToLeft", "No", "Unknown").
    public var manga: String?

    public init(source: Source, series: String? = nil, number: String? = nil, volume: Int? = nil, title: String? = nil,
                publisher: String? = nil, year: Int? = nil, month: Int? = nil, arcs: [Arc] = [], pageCount: Int? = nil,
                language: String? = nil, manga: String? = nil) {
        self.source = source
        self.series = series
        self.number = number
        self.volume = volume
        self.title = title
        self.publisher = publisher
        self.year = year
        self.month = month
        self.arcs = arcs
        self.pageCount = pageCount
        self.language = language
        self.manga = manga
    }

    /// Longest text kept of a name field (series, title, publisher, arc).
    public static let maxNameLength = 300
    public static let maxArcs = 32

    /// Every field bounded and cleaned, out-of-range numbers dropped: the daemon applies it to
    /// what a worker sends, whatever the worker did.
    public func sanitized() -> ComicMetadata {
        func name(_ text: String?) -> String? { text.flatMap { MetadataText.clean($0, maxLength: Self.maxNameLength) } }
        func short(_ text: String?) -> String? { text.flatMap { MetadataText.clean($0, maxLength: 32) } }
        func within(_ value: Int?, _ range: ClosedRange<Int>) -> Int? { value.flatMap { range.contains($0) ? $0 : nil } }
        var arcs: [Arc] = []
        for arc in self.arcs.prefix(Self.maxArcs) {
            guard let arcName = name(arc.name), !arcs.contains(where: { $0.name == arcName }) else { continue }
            arcs.append(Arc(name: arcName, number: short(arc.number)))
        }
        return ComicMetadata(source: source, series: name(series), number: short(number).map(IssueNumber.normalized),
                             volume: within(volume, 0...999_999), title: name(title), publisher: name(publisher),
                             year: within(year, 1...9999), month: within(month, 1...12), arcs: arcs,
                             pageCount: within(pageCount, 0...1_000_000), language: short(language), manga: short(manga))
    }

    /// This record with series, number, volume and year taken from `other` where it has none
    /// (a ComicInfo.xml without a series still names the comic by its file name).
    public func filling(from other: ComicMetadata) -> ComicMetadata {
        var copy = self
        if copy.series == nil {
            copy.series = other.series
            if copy.number == nil { copy.number = other.number }
            if copy.volume == nil { copy.volume = other.volume }
        }
        if copy.year == nil { copy.year = other.year }
        return copy
    }
}

/// Cleaning of one text field.
public enum MetadataText {
    /// Control characters (C0, C1, DEL, line and paragraph separators) become spaces, runs of
    /// white space one space, the ends trimmed, and the text cut to `maxLength` characters; nil
    /// when nothing is left.
    public static func clean(_ text: String, maxLength: Int) -> String? {
        // Most tags are plain ASCII words with single spaces: nothing to clean.
        if text.utf8.count <= maxLength, text.utf8.first.map({ $0 > 0x20 && $0 < 0x7F }) ?? false,
           text.utf8.last.map({ $0 > 0x20 && $0 < 0x7F }) ?? false,
           !zip(text.utf8, text.utf8.dropFirst()).contains(where: { ($0 == 0x20 && $1 == 0x20) || $1 < 0x20 || $1 >= 0x7F }) {
            return text
        }
        var out = ""
        var pendingSpace = false
        var count = 0
        for scalar in text.unicodeScalars {
            let isSpace = scalar.properties.isWhitespace || isControl(scalar)
            if isSpace {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace {
                out.unicodeScalars.append(" ")
                pendingSpace = false
            }
            out.unicodeScalars.append(scalar)
            count += 1
            // Scalars bound the work on a huge field before characters are counted.
            if count >= maxLength * 4 { break }
        }
        if out.count > maxLength { out = String(out.prefix(maxLength)).trimmingSpaces }
        return out.isEmpty ? nil : out
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0xFEFF: true
        default: scalar.properties.generalCategory == .format && scalar.value >= 0x202A && scalar.value <= 0x2069
        }
    }
}

extension String {
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.last?.isWhitespace == true { scalars = scalars.dropLast() }
        while scalars.first?.isWhitespace == true { scalars = scalars.dropFirst() }
        return String(scalars)
    }
}

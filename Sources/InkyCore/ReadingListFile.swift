/// A ComicRack reading list (`.cbl`, the format reading-list projects publish):
/// `<ReadingList><Name/><Books><Book Series= Number= Volume= Year=/>…</Books></ReadingList>`.
/// Read with `SafeXML` (no DTD) and bounded like any tag: a list is data from anyone.
public struct ReadingListFile: Sendable, Equatable {
    public struct Book: Sendable, Equatable {
        public var series: String
        public var number: String?
        public var volume: Int?
        public var year: Int?

        public init(series: String, number: String? = nil, volume: Int? = nil, year: Int? = nil) {
            self.series = series
            self.number = number
            self.volume = volume
            self.year = year
        }

        /// `Batman #5 (2011)`, for MISSING.txt.
        public var description: String {
            series + (number.map { " #\($0)" } ?? "") + (volume.map { " v\($0)" } ?? "") + (year.map { " (\($0))" } ?? "")
        }
    }

    public var name: String?
    public var books: [Book]

    public static let maxBooks = 10_000

    public init(name: String?, books: [Book]) {
        self.name = name
        self.books = books
    }

    public static func parse(_ bytes: [UInt8]) -> ReadingListFile? {
        guard let root = SafeXML.parse(bytes), root.name.caseInsensitiveCompare("ReadingList") == .orderedSame else { return nil }
        var books: [Book] = []
        for element in root.child("Books")?.children ?? [] where element.name.caseInsensitiveCompare("Book") == .orderedSame {
            guard books.count < maxBooks,
                  let series = element.attribute("Series").flatMap({ MetadataText.clean($0, maxLength: ComicMetadata.maxNameLength) }) else { continue }
            func integer(_ name: String) -> Int? { element.attribute(name).flatMap { Int($0.trimmingSpaces) }.flatMap { $0 >= 0 ? $0 : nil } }
            books.append(Book(series: series,
                              number: element.attribute("Number").flatMap { MetadataText.clean($0, maxLength: 32) }.map(IssueNumber.normalized),
                              volume: integer("Volume"), year: integer("Year")))
        }
        return ReadingListFile(name: root.child("Name").flatMap { MetadataText.clean($0.text, maxLength: ComicMetadata.maxNameLength) },
                               books: books)
    }
}

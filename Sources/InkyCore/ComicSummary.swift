/// What `scan` and `pages` report about one comic: its pages or why it cannot be read.
/// Also the documented `--json` shape (docs/json-output.md).
public struct ComicSummary: Sendable, Equatable, Codable {
    public var path: String
    public var format: ArchiveFormat?
    public var pages: [Page]?
    public var comicInfo: String?
    public var skipped: [SkippedEntry]?
    public var error: ErrorSummary?

    public struct ErrorSummary: Sendable, Equatable, Codable {
        public var kind: String
        public var message: String
    }

    public init(path: String, listing: ComicListing) {
        self.path = path
        format = listing.format
        pages = listing.pages
        comicInfo = listing.comicInfo?.path
        skipped = listing.skipped.filter(\.reason.isNoteworthy)
    }

    public init(path: String, format: ArchiveFormat?, error: ComicError) {
        self.path = path
        self.format = format
        self.error = ErrorSummary(kind: error.kind, message: error.message)
    }
}

/// Bounds that keep a hostile or broken archive from exhausting memory, disk or patience.
/// Defaults follow real comics: omnibus editions pass 2,000 pages, scans stay far below 128 MiB.
public struct ComicLimits: Sendable, Equatable, Codable {
    public var maxPages: Int
    public var maxPageBytes: Int64
    public var maxComicBytes: Int64
    /// Ratio of produced to consumed bytes above which a page is treated as a bomb...
    public var maxCompressionRatio: Int64
    /// ...once it has produced more than this many bytes (small pages compress well legitimately).
    public var ratioCheckAfterBytes: Int64
    public var maxNameBytes: Int
    /// Headers read while listing, pages or not: stops a 100,000-entry junk archive early.
    public var maxEntries: Int
    /// Header errors tolerated while listing before the archive is called corrupted
    /// (libarchive 3.6 can report the same failed header forever).
    public var maxHeaderErrors: Int
    /// How pages without a stored image are rendered. Not a bound, but it travels with the
    /// limits to every worker that reads a comic.
    public var rendering: PageRendering

    public init(maxPages: Int = 10_000,
                maxPageBytes: Int64 = 128 << 20,
                maxComicBytes: Int64 = 4 << 30,
                maxCompressionRatio: Int64 = 100,
                ratioCheckAfterBytes: Int64 = 1 << 20,
                maxNameBytes: Int = 1024,
                maxEntries: Int = 200_000,
                maxHeaderErrors: Int = 16,
                rendering: PageRendering = .default) {
        self.maxPages = maxPages
        self.maxPageBytes = maxPageBytes
        self.maxComicBytes = maxComicBytes
        self.maxCompressionRatio = maxCompressionRatio
        self.ratioCheckAfterBytes = ratioCheckAfterBytes
        self.maxNameBytes = maxNameBytes
        self.maxEntries = maxEntries
        self.maxHeaderErrors = maxHeaderErrors
        self.rendering = rendering
    }

    public static let `default` = ComicLimits()
}

/// A comic's pages in reading order, with what was left out and why: the result of
/// listing an archive's headers, before any page data is read.
public struct ComicListing: Sendable, Equatable, Codable {
    public var format: ArchiveFormat
    public var pages: [Page]
    /// The ComicInfo.xml member, kept as metadata rather than a page.
    public var comicInfo: ArchiveEntry?
    /// The first `maxSkippedKept` members left out, with why.
    public var skipped: [SkippedEntry]
    /// True when pages share one compressed stream (solid 7z/RAR, compressed tar): reading
    /// forward is cheap, going back restarts the decoder.
    public var isSolid: Bool
    /// The settings rendered pages (`Page.sizeAfterRendering`) are rendered with; nil when no
    /// page is rendered and none converted. Sizes learned by rendering are only true for these settings.
    public var rendering: PageRendering?
    /// What the comic says it is (ComicInfo.xml, else CoMet, ComicBookInfo or its file name), as
    /// a worker read it when listing. Not part of `ListingCodec`'s bytes: the index keeps it in
    /// its own table, where the views query it.
    public var metadata: ComicMetadata?
    /// The CoMet.xml member, for the worker that lists the comic to read its metadata from;
    /// not kept in the index (a listing read back from there has none).
    public var coMet: ArchiveEntry?

    public init(format: ArchiveFormat, pages: [Page], comicInfo: ArchiveEntry?, skipped: [SkippedEntry], isSolid: Bool,
                rendering: PageRendering? = nil) {
        self.format = format
        self.pages = pages
        self.comicInfo = comicInfo
        self.skipped = skipped
        self.isSolid = isSolid
        self.rendering = rendering
    }

    /// An archive of 100,000 junk members (within the entry limit) made a listing of several
    /// MiB, over the worker frame limit: the comic failed as "the worker sent garbage". The
    /// skipped list explains missing pages to a person; a few hundred say all there is to say.
    public static let maxSkippedKept = 500

    /// Bytes of the pages whose size is known.
    public var totalBytes: Int64 { pages.reduce(0) { $0 + max(0, $1.size) } }

    /// The same listing with sizes learned by rendering pages (page number → bytes).
    public func learning(sizes: [Int: Int64]) -> ComicListing {
        var copy = self
        for (number, size) in sizes where copy.pages.indices.contains(number) && !copy.pages[number].isSizeKnown {
            copy.pages[number].size = size
        }
        return copy
    }

    /// The same listing with CRC-32s computed from pages' bytes (page number → CRC).
    public func learning(crcs: [Int: UInt32]) -> ComicListing {
        var copy = self
        for (number, crc) in crcs where copy.pages.indices.contains(number) && copy.pages[number].crc32 == nil {
            copy.pages[number].learnedCRC32 = crc
        }
        return copy
    }

    /// True when every page's size and CRC-32 are known: enough to lay the comic out as a ZIP.
    public var isZipReady: Bool { pages.allSatisfy { $0.isSizeKnown && $0.crc32 != nil } }

    /// True when a listing can serve under `rendering`: its learned sizes were measured with it,
    /// and its names and sizes are the converted ones exactly when pages are converted (a
    /// converting listing always records its settings, whether or not a page needed them).
    public func fits(_ rendering: PageRendering) -> Bool {
        guard let own = self.rendering else { return !rendering.conversion.isActive }
        guard own == rendering else { return false }
        // Listed before pages encoded as JPEG into a whole box were listed at their budget
        // (`PageSizeBudget`): such a page of unknown size is listed again, so that no `ls -l`
        // waits for it to be encoded.
        let budgets = rendering.conversion.sizeBudget(sourceBytes: 0, sourceName: "") != nil
        return !(budgets && pages.contains { !$0.isSizeKnown && EntryPath.lowercasedExtension(of: $0.name) == "jpg" })
    }

    /// Builds the listing from an archive's members: filters, orders and names the pages and
    /// enforces the comic-wide limits. `path` only labels errors.
    public static func build(path: String, format: ArchiveFormat, entries: [ArchiveEntry],
                             isSolid: Bool, limits: ComicLimits) throws(ComicError) -> ComicListing {
        var candidates: [ArchiveEntry] = []
        var comicInfo: ArchiveEntry?, coMet: ArchiveEntry?
        var skipped: [SkippedEntry] = []
        for entry in entries {
            switch PageFilter.classify(entry, limits: limits) {
            case .page: candidates.append(entry)
            case .comicInfo: if comicInfo == nil { comicInfo = entry }
            case .coMet: if coMet == nil { coMet = entry }
            case .skipped(let reason) where skipped.count < maxSkippedKept: skipped.append(SkippedEntry(path: entry.path, reason: reason))
            case .skipped: continue
            }
        }
        // Nothing readable but locked entries: the honest answer is "encrypted", not "no pages".
        if candidates.isEmpty && entries.contains(where: \.isEncrypted) { throw .encrypted(path: path) }
        if candidates.count > limits.maxPages {
            throw .limitExceeded(path: path, detail: "\(candidates.count) pages, more than the limit of \(limits.maxPages)")
        }
        let keyed = zip(NaturalOrder.sortKeys(for: candidates.map(\.path)), candidates).map { (key: $0, entry: $1) }
        let ordered = keyed.sorted { lhs, rhs in
            switch NaturalOrder.compare(lhs.key, rhs.key) {
            case .orderedAscending: true
            case .orderedDescending: false
            case .orderedSame: lhs.entry.index < rhs.entry.index
            }
        }.map(\.entry)
        let pages = ordered.enumerated().map { number, entry in
            Page(number: number,
                 name: PageNaming.name(number: number, of: ordered.count, sourcePath: entry.path),
                 sourcePath: entry.path, entryIndex: entry.index, size: entry.declaredSize ?? 0)
        }
        var listing = ComicListing(format: format, pages: pages, comicInfo: comicInfo, skipped: skipped, isSolid: isSolid)
        listing.coMet = coMet
        if listing.totalBytes > limits.maxComicBytes {
            throw .limitExceeded(path: path, detail: "pages total \(ByteCountText.format(listing.totalBytes)), more than the limit of \(ByteCountText.format(limits.maxComicBytes))")
        }
        return listing
    }
}

/// An archive member that is not a page, with the reason.
public struct SkippedEntry: Sendable, Equatable, Codable {
    public var path: String
    public var reason: SkipReason

    public init(path: String, reason: SkipReason) {
        self.path = path
        self.reason = reason
    }
}

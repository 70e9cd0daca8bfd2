/// How expensive reading a page is from where a reader stands now. Callers (the window cache)
/// use it to read solid archives in stream order and to restart a decoder once, not per page.
public enum ReadCost: Sendable, Equatable {
    /// Random access (ZIP, plain TAR, folder) or the very next entry in the stream.
    case direct
    /// Forward in a solid stream: the entries in between are decoded and thrown away.
    case forward(skippedEntries: Int)
    /// Behind the decoder's position in a solid stream: it starts again from the beginning.
    case restart(skippedEntries: Int)
}

/// Counters that make a reader's work visible to tests and benchmarks.
public struct ReaderStats: Sendable, Equatable {
    /// Bytes read from the archive file (compressed input).
    public var sourceBytesRead: Int64 = 0
    /// Bytes the decoder produced for pages handed out.
    public var pageBytesProduced: Int64 = 0
    /// Times the decoder was reopened to go backwards.
    public var restarts: Int = 0

    public init() {}
}

/// An open comic. Not thread-safe by design (libarchive handles allow one owner at a time):
/// one reader belongs to one thread or one worker process at once.
public protocol ComicReader: AnyObject {
    var path: String { get }
    var listing: ComicListing { get }
    var stats: ReaderStats { get }
    /// Called now and then while decoding, so a supervisor can tell slow from stuck.
    var onProgress: (() -> Void)? { get set }
    func cost(of page: Page) -> ReadCost
    /// Streams exactly the page's bytes to `sink`, in order, in chunks. Fails (and stops
    /// calling `sink`) when the archive yields more or fewer bytes than the listing promised.
    func read(_ page: Page, into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError)
    /// The ComicInfo.xml bytes, if the archive has one (bounded by the per-page limit).
    func readComicInfo() throws(ComicError) -> [UInt8]?
    /// The CoMet.xml bytes, if the archive has one (bounded by the per-page limit).
    func readCoMet() throws(ComicError) -> [UInt8]?
    /// The archive's comment (a ZIP's, where ComicBookInfo keeps its JSON); nil when none.
    var archiveComment: [UInt8]? { get }
}

extension ComicReader {
    public func readCoMet() throws(ComicError) -> [UInt8]? { nil }
    public var archiveComment: [UInt8]? { nil }
}

extension ComicReader {
    /// The whole page in memory; fine for pages, which the limits bound.
    public func readPage(_ page: Page) throws(ComicError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(clamping: page.size))
        try read(page) { chunk in bytes.append(contentsOf: chunk) }
        return bytes
    }
}

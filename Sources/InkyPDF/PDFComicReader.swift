import InkyCore

/// A PDF as a comic: one page file per PDF page, in page order. A page that is exactly one
/// image over the whole page is served as that image's original bytes (size known from the
/// listing, nothing decoded); any other page is rendered to PNG when it is read, and its size
/// is `Page.sizeAfterRendering` until then.
public final class PDFComicReader: ComicReader {
    public let path: String
    public let listing: ComicListing
    public var onProgress: (() -> Void)?
    public private(set) var stats = ReaderStats()
    private let limits: ComicLimits
    private var document: MuPDFDocument
    /// Opens the document again, after a read of its bytes failed (`MuPDFDocument.isDamaged`):
    /// the pages after a damaged one still read, from a document that never saw the damage.
    private let reopen: () throws(ComicError) -> MuPDFDocument
    private let contents: [PDFPageContent]

    public convenience init(path: String, limits: ComicLimits) throws(ComicError) {
        try self.init(path: path, limits: limits) { () throws(ComicError) in try MuPDFDocument(path: path) }
    }

    /// A PDF that is no plain file (a vault object, its chunks decrypted and authenticated as
    /// MuPDF reads them), named `label` in messages. A read that fails (a chunk not authentic)
    /// fails the listing or the page that needed it, never serves what MuPDF made of the rest.
    public convenience init(bytes: any RandomAccessBytes, label: String, limits: ComicLimits) throws(ComicError) {
        try self.init(path: label, limits: limits) { () throws(ComicError) in try MuPDFDocument(bytes: bytes, label: label) }
    }

    private init(path: String, limits: ComicLimits, open: @escaping () throws(ComicError) -> MuPDFDocument) throws(ComicError) {
        self.path = path
        self.limits = limits
        reopen = open
        document = try open()
        let count = try document.pageCount()
        // Every real PDF has a page; MuPDF repairs a damaged file into one with none.
        if count == 0 { throw .corrupted(path: path, detail: "no page could be found: the PDF is damaged or truncated") }
        if count > limits.maxPages {
            throw .limitExceeded(path: path, detail: "\(count) pages, more than the limit of \(limits.maxPages)")
        }
        var contents: [PDFPageContent] = []
        var pages: [Page] = []
        for number in 0..<count {
            // A page MuPDF cannot even interpret is left to the renderer, which reports it on read;
            // one whose bytes cannot be read fails the listing.
            var content = PDFPageContent.rendered
            do throws(ComicError) {
                content = try document.probe(page: number)
            } catch {
                if document.isDamaged { throw error }
            }
            var ext = "png"
            if case .image(let image) = content {
                if image.fileSize > limits.maxPageBytes {
                    content = .rendered
                } else if image.format == .jpeg2000 {
                    ext = image.fileExtension(head: Array(try document.rawStream(object: image.object).prefix(8)))
                } else {
                    ext = image.fileExtension(head: [])
                }
            }
            let source = if case .image = content { "page \(number + 1) image.\(ext)" } else { "page \(number + 1) rendered.png" }
            let size = if case .image(let image) = content { image.fileSize } else { Page.sizeAfterRendering }
            contents.append(content)
            pages.append(Page(number: number, name: PageNaming.name(number: number, of: count, sourcePath: source),
                              sourcePath: source, entryIndex: number, size: size))
        }
        self.contents = contents
        let rendersSome = contents.contains(.rendered)
        listing = ComicListing(format: .pdf, pages: pages, comicInfo: nil, skipped: [], isSolid: false,
                               rendering: rendersSome ? limits.rendering : nil)
        if listing.totalBytes > limits.maxComicBytes {
            throw .limitExceeded(path: path, detail: "pages total \(ByteCountText.format(listing.totalBytes)), more than the limit of \(ByteCountText.format(limits.maxComicBytes))")
        }
    }

    public func cost(of page: Page) -> ReadCost { .direct }

    public func read(_ page: Page, into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        guard contents.indices.contains(page.entryIndex) else {
            throw .corrupted(path: path, detail: "no page \(page.entryIndex + 1)")
        }
        onProgress?()
        let bytes = try bytes(of: page.entryIndex)
        guard Int64(bytes.count) <= limits.maxPageBytes else {
            throw .pageTooLarge(path: path, entry: page.sourcePath, limit: limits.maxPageBytes)
        }
        if page.isSizeKnown && Int64(bytes.count) != page.size {
            throw .corrupted(path: path, detail: "page \(page.entryIndex + 1) came out as \(bytes.count) bytes, not the \(page.size) its listing promised")
        }
        stats.pageBytesProduced += Int64(bytes.count)
        bytes.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(all.count, offset + (1 << 20))
                sink(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                offset = end
            }
        }
    }

    private func bytes(of number: Int) throws(ComicError) -> [UInt8] {
        if document.isDamaged { document = try reopen() }
        switch contents[number] {
        case .rendered:
            return try document.renderPNG(page: number, limits.rendering)
        case .image(let image):
            let stream = try document.rawStream(object: image.object)
            stats.sourceBytesRead += Int64(stream.count)
            guard image.format == .png else { return stream }
            guard let file = PNGFile.wrap(idat: stream, width: image.width, height: image.height,
                                          bitDepth: image.bitsPerComponent, colors: image.colors) else {
                throw .corrupted(path: path, detail: "page \(number + 1): the image does not fit in a PNG file")
            }
            return file
        }
    }

    public func readComicInfo() throws(ComicError) -> [UInt8]? { nil }

    /// The MuPDF version, for `--version`.
    public static var engineVersion: String { MuPDFDocument.version }
}

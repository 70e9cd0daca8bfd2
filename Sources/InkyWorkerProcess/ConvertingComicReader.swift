import Foundation
import InkyCore
import InkyWorker
import InkyImage

/// A comic whose pages are converted on their way out (`PageConversion`): its listing names a
/// converted page with its new extension (`007.webp` → `007.jpg`) and lists it with
/// `Page.sizeAfterRendering`, so the daemon learns its size from the worker's `pageStart`, as
/// for a rendered PDF page. A profile that cuts pages (spreads, strips) lists each piece as a
/// page of its own (`PagePiece`), from dimensions read at listing (`PageShapes`); the listing
/// is made only when asked for, so a worker opened to read pages does not read them all first.
/// Listing encodes nothing. A page that does not decode, or that a limit refuses (a
/// decompression bomb's header), is served as its archive's bytes, and logged.
final class ConvertingComicReader: ComicReader {
    private let inner: any ComicReader
    private let conversion: PageConversion
    private let limits: ComicLimits
    /// Archive entry index → the page as the archive has it.
    private let originals: [Int: Page]
    /// A vault object: its log lines name no member (the names are the vault's secret).
    private let isPrivate: Bool
    /// The last page read, for its next piece: a solid archive would otherwise restart for it.
    private var lastSource: (entry: Int, bytes: [UInt8])?
    private lazy var madeListing: ComicListing = makeListing()

    init(_ inner: any ComicReader, limits: ComicLimits, isPrivate: Bool) {
        self.inner = inner
        self.limits = limits
        self.isPrivate = isPrivate
        conversion = limits.rendering.conversion
        originals = Dictionary(inner.listing.pages.map { ($0.entryIndex, $0) }, uniquingKeysWith: { first, _ in first })
    }

    var listing: ComicListing { madeListing }
    var path: String { inner.path }
    var stats: ReaderStats { inner.stats }
    var onProgress: (() -> Void)? {
        get { inner.onProgress }
        set { inner.onProgress = newValue }
    }

    private func makeListing() -> ComicListing {
        var listing = inner.listing
        let cuts = conversion.cutsPages ? PageShapes.pieces(of: inner, conversion: conversion, limits: limits, isPrivate: isPrivate) : [:]
        var pages: [Page] = []
        for var page in listing.pages {
            let entry = page.entryIndex
            // A page encoded as JPEG into a whole box is listed at its budget (`PageSizeBudget`).
            let budget = conversion.sizeBudget(sourceBytes: max(0, page.size), sourceName: page.sourcePath)
            if let pieces = cuts[entry] {
                let ext = conversion.cutExtension(of: page.name)
                let name = PageConversion.renamed(page.name, to: ext)
                page.size = ext == "jpg" ? budget ?? Page.sizeAfterRendering : Page.sizeAfterRendering
                page.storedData = nil
                page.learnedCRC32 = nil
                for piece in pieces {
                    page.number = pages.count
                    page.name = piece.name(for: name)
                    page.piece = piece
                    pages.append(page)
                }
                continue
            }
            if let ext = conversion.convertedExtension(of: page.name) {
                page.name = PageConversion.renamed(page.name, to: ext)
                page.size = ext == "jpg" ? budget ?? Page.sizeAfterRendering : Page.sizeAfterRendering
                page.storedData = nil
                // A deflated member's CRC from the ZIP's directory is the archive's bytes', not these.
                page.learnedCRC32 = nil
            }
            page.number = pages.count
            pages.append(page)
        }
        listing.pages = pages
        // Recorded whether or not a page needed it: the daemon then knows the names are final.
        listing.rendering = limits.rendering
        return listing
    }

    /// The archive's page behind a listed one, and the piece of it when it is cut.
    private func source(of page: Page) throws(ComicError) -> (original: Page, piece: PagePiece?) {
        guard conversion.cutsPages else {
            guard page.piece == nil else { throw .corrupted(path: path, detail: "a piece of entry \(page.entryIndex) asked for, but no page is cut") }
            return (originals[page.entryIndex] ?? page, nil)
        }
        guard let original = originals[page.entryIndex] else {
            throw .corrupted(path: path, detail: "no page listed as entry \(page.entryIndex)")
        }
        return (original, page.piece)
    }

    func cost(of page: Page) -> ReadCost {
        guard let (original, _) = try? source(of: page) else { return .direct }
        return lastSource?.entry == original.entryIndex ? .direct : inner.cost(of: original)
    }

    func readComicInfo() throws(ComicError) -> [UInt8]? { try inner.readComicInfo() }

    func read(_ page: Page, into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        let (original, piece) = try source(of: page)
        let ext = piece == nil ? conversion.convertedExtension(of: original.name) : conversion.cutExtension(of: original.name)
        guard let ext else { return try inner.read(original, into: sink) }
        let bytes: [UInt8]
        if let lastSource, lastSource.entry == original.entryIndex {
            bytes = lastSource.bytes
        } else {
            bytes = try inner.readPage(original)
            lastSource = piece == nil ? nil : (original.entryIndex, bytes)
        }
        onProgress?()
        let known = page.isSizeKnown ? Int(clamping: page.size) : nil
        var converted = converted(bytes, output: ext == "png" ? .png : .jpeg, page: original, piece: piece, fitting: known)
        // Its size was listed (a budget, or learned from an earlier encoding): encoded to fit,
        // and padded to it exactly.
        if let known {
            guard let padded = PaddedImage.padded(converted, to: known) else {
                throw .corrupted(path: path, detail: "converted page \(page.number + 1) came out as \(converted.count) bytes, more than the \(known) it is listed with")
            }
            converted = padded
        }
        converted.withUnsafeBytes { sink($0) }
    }

    /// A side the fit leaves free: libvips' largest coordinate (VIPS_MAX_COORD). Past it libvips
    /// refuses the value and thumbnails to a square of the other side (a width-only fit of a
    /// 1200x1800 page came out 200 wide for 300 asked).
    static let unbounded = 10_000_000

    private func converted(_ source: [UInt8], output: ConvertedImage.Format, page: Page, piece: PagePiece?, fitting: Int?) -> [UInt8] {
        let fit = conversion.fitWidth != nil || conversion.fitHeight != nil
            ? ImageSize(width: conversion.fitWidth ?? Self.unbounded, height: conversion.fitHeight ?? Self.unbounded) : nil
        var settings = ImageConversion(fit: fit, grayscale: conversion.grayscale, output: output,
                                       maxBytes: Int(clamping: limits.maxPageBytes), cropMargins: conversion.cropMargins,
                                       piece: piece.map { ImagePiece(vertical: $0.cut == .strip, position: $0.position, count: $0.count) })
        settings.fitBytes = fitting
        do throws(ImageError) {
            return try ImageConverter.convert(source, settings, progress: onProgress).bytes
        } catch {
            let member = isPrivate ? "entry \(page.entryIndex + 1)" : "'\(page.sourcePath)'"
            FileHandle.standardError.write(Data("inkyfs worker: \(path): page \(member) served as it is: \(error)\n".utf8))
            return source
        }
    }
}

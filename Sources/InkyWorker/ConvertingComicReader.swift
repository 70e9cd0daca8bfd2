import Foundation
import InkyCore
import InkyImage

/// A comic whose pages are converted on their way out (`PageConversion`): its listing names a
/// converted page with its new extension (`007.webp` → `007.jpg`) and lists it with
/// `Page.sizeAfterRendering`, so the daemon learns its size from the worker's `pageStart`, as
/// for a rendered PDF page. Listing decodes nothing. A page that does not decode, or that a
/// limit refuses (a decompression bomb's header), is served as its archive's bytes, and logged.
final class ConvertingComicReader: ComicReader {
    private let inner: any ComicReader
    let listing: ComicListing
    private let conversion: PageConversion
    private let limits: ComicLimits
    /// Entry index → the page as the archive has it, for the pages that are converted.
    private let originals: [Int: Page]
    private let outputs: [Int: ConvertedImage.Format]
    /// A vault object: its log lines name no member (the names are the vault's secret).
    private let isPrivate: Bool

    init(_ inner: any ComicReader, limits: ComicLimits, isPrivate: Bool) {
        self.inner = inner
        self.limits = limits
        self.isPrivate = isPrivate
        conversion = limits.rendering.conversion
        var listing = inner.listing
        var originals: [Int: Page] = [:]
        var outputs: [Int: ConvertedImage.Format] = [:]
        for (number, page) in listing.pages.enumerated() {
            guard let ext = conversion.convertedExtension(of: page.name) else { continue }
            originals[page.entryIndex] = page
            outputs[page.entryIndex] = ext == "png" ? .png : .jpeg
            listing.pages[number].name = PageConversion.renamed(page.name, to: ext)
            listing.pages[number].size = Page.sizeAfterRendering
            listing.pages[number].storedData = nil
        }
        // Recorded whether or not a page needed it: the daemon then knows the names are final.
        listing.rendering = limits.rendering
        self.listing = listing
        self.originals = originals
        self.outputs = outputs
    }

    var path: String { inner.path }
    var stats: ReaderStats { inner.stats }
    var onProgress: (() -> Void)? {
        get { inner.onProgress }
        set { inner.onProgress = newValue }
    }

    func cost(of page: Page) -> ReadCost { inner.cost(of: originals[page.entryIndex] ?? page) }

    func readComicInfo() throws(ComicError) -> [UInt8]? { try inner.readComicInfo() }

    func read(_ page: Page, into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        guard let original = originals[page.entryIndex], let output = outputs[page.entryIndex] else {
            return try inner.read(page, into: sink)
        }
        let source = try inner.readPage(original)
        onProgress?()
        let bytes = converted(source, output: output, page: original)
        if page.isSizeKnown && Int64(bytes.count) != page.size {
            throw .corrupted(path: path, detail: "converted page \(page.entryIndex + 1) came out as \(bytes.count) bytes, not the \(page.size) learned before")
        }
        bytes.withUnsafeBytes { sink($0) }
    }

    private func converted(_ source: [UInt8], output: ConvertedImage.Format, page: Page) -> [UInt8] {
        let fit = conversion.fitWidth != nil || conversion.fitHeight != nil
            ? ImageSize(width: conversion.fitWidth ?? Int(Int32.max), height: conversion.fitHeight ?? Int(Int32.max)) : nil
        let settings = ImageConversion(fit: fit, grayscale: conversion.grayscale, output: output,
                                       maxBytes: Int(clamping: limits.maxPageBytes))
        do throws(ImageError) {
            return try ImageConverter.convert(source, settings, progress: onProgress).bytes
        } catch {
            let member = isPrivate ? "entry \(page.entryIndex + 1)" : "'\(page.sourcePath)'"
            FileHandle.standardError.write(Data("inkyfs worker: \(path): page \(member) served as it is: \(error)\n".utf8))
            return source
        }
    }
}

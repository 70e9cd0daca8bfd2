import ArgumentParser
import InkyCore

/// The limits every command that opens comics accepts.
public struct LimitOptions: ParsableArguments {
    @Option(help: "Most pages a comic may have.")
    public var maxPages: Int = ComicLimits.default.maxPages

    @Option(help: ArgumentHelp("Largest page, e.g. 256M. (default: 128M)", valueName: "size"), transform: parseSize)
    public var maxPageSize: Int64 = ComicLimits.default.maxPageBytes

    @Option(help: ArgumentHelp("Largest comic (sum of its pages), e.g. 8G. (default: 4G)", valueName: "size"), transform: parseSize)
    public var maxComicSize: Int64 = ComicLimits.default.maxComicBytes

    @Option(help: ArgumentHelp("Height in pixels of PDF pages that are rendered (pages that are not one stored image).",
                               valueName: "pixels"))
    public var pdfHeight: Int = PageRendering.default.height

    @Option(help: ArgumentHelp("Render such PDF pages at this resolution instead of --pdf-height.", valueName: "dpi"))
    public var pdfDpi: Int?

    public init() {}

    public mutating func validate() throws {
        guard (100...20_000).contains(pdfHeight) else { throw ValidationError("--pdf-height must be between 100 and 20000 pixels") }
        if let pdfDpi, !(20...1_200).contains(pdfDpi) { throw ValidationError("--pdf-dpi must be between 20 and 1200") }
    }

    public var limits: ComicLimits {
        ComicLimits(maxPages: maxPages, maxPageBytes: maxPageSize, maxComicBytes: maxComicSize,
                    rendering: PageRendering(height: pdfHeight, dpi: pdfDpi))
    }
}

public func parseSize(_ text: String) throws -> Int64 {
    guard let bytes = ByteCountText.parse(text), bytes > 0 else {
        throw ValidationError("'\(text)' is not a size: use a number with a K, M or G suffix, like 256M")
    }
    // "--cache-size 12" meant 12M, not a cache of 12 bytes: a bare number must be plainly bytes.
    if text.trimmingCharacters(in: .whitespaces).last?.isNumber == true, bytes < 1 << 20 {
        throw ValidationError("'\(text)' would be \(bytes) bytes: give a unit, like \(text)M or \(text)G (\(text)B if bytes are meant)")
    }
    return bytes
}

/// A disk cache's size: like `parseSize`, or 0 for none.
public func parseCacheSize(_ text: String) throws -> Int64 {
    text.trimmingCharacters(in: .whitespaces) == "0" ? 0 : try parseSize(text)
}

import ArgumentParser
import InkyCore

/// The limits every command that opens comics accepts.
struct LimitOptions: ParsableArguments {
    @Option(help: "Most pages a comic may have.")
    var maxPages: Int = ComicLimits.default.maxPages

    @Option(help: ArgumentHelp("Largest page, e.g. 128M.", valueName: "size"), transform: parseSize)
    var maxPageSize: Int64 = ComicLimits.default.maxPageBytes

    @Option(help: ArgumentHelp("Largest comic (sum of its pages), e.g. 4G.", valueName: "size"), transform: parseSize)
    var maxComicSize: Int64 = ComicLimits.default.maxComicBytes

    var limits: ComicLimits {
        ComicLimits(maxPages: maxPages, maxPageBytes: maxPageSize, maxComicBytes: maxComicSize)
    }
}

func parseSize(_ text: String) throws -> Int64 {
    guard let bytes = ByteCountText.parse(text), bytes > 0 else {
        throw ValidationError("'\(text)' is not a size: use a number with an optional K, M or G suffix, like 256M")
    }
    return bytes
}

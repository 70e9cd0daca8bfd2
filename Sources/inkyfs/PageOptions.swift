import ArgumentParser
import InkyCore

/// How pages are served: as the archive holds them, or converted for viewers and e-readers.
struct PageOptions: ParsableArguments {
    @Option(help: ArgumentHelp("original: page bytes as the archive holds them. jpeg: pages in other formats (WebP, AVIF, "
                               + "JPEG XL, HEIF, JPEG 2000, TIFF, BMP) are served as JPEG, GIF as PNG, named 007.jpg; a JPEG XL "
                               + "made from a JPEG as that JPEG. Converted in the workers at a page's first lookup; -o pages=jpeg.",
                               valueName: "original|jpeg"))
    var pages: PageConversion.Format = .original

    @Option(help: ArgumentHelp("Shrink every page into this box, keeping its shape (never enlarged), as JPEG (PNG for PNG and "
                               + "GIF pages); -o fit=1264x1680.", valueName: "WxH"), transform: parseBox)
    var fit: Box?

    @Flag(help: "Serve every page in grayscale (JPEG, or PNG for PNG and GIF pages); -o grayscale=1.")
    var grayscale = false

    @Flag(inversion: .prefixedNo,
          help: ArgumentHelp("A landscape page (a two-page spread) becomes two pages, its halves in reading order: left first, "
                             + "right first for a right-to-left comic (ComicInfo Manga=YesAndRightToLeft, or --rtl). The halves "
                             + "are named 007-1.jpg, 007-2.jpg; -o split_spreads=1."))
    var splitSpreads: Bool?

    @Flag(help: "Read every comic right to left, whatever its ComicInfo says (the order of a spread's halves); -o rtl=1.")
    var rtl = false

    @Flag(inversion: .prefixedNo, help: "Trim uniform (scanner) borders before fitting; -o crop_margins=1.")
    var cropMargins: Bool?

    @Flag(inversion: .prefixedNo,
          help: ArgumentHelp("Cut a page taller than \(PagePiece.stripFactor) fit boxes, once shrunk to the box's width, into "
                             + "pages one box high (at most \(PagePiece.maxCount)), each cut moved to the nearest blank row "
                             + "within a sixth of a strip; named 007-01.jpg... Needs --fit or --device; -o strips=1."))
    var strips: Bool?

    @Option(help: ArgumentHelp("Pages for an e-reader's screen: its --fit, in grayscale, spreads split, webtoon strips cut, "
                               + "margins cropped on 6-7\" screens (an explicit --fit or --no-... wins). "
                               + "One of: \(PageOptions.devices.keys.sorted().joined(separator: ", ")); -o device=.",
                               valueName: "name"))
    var device: String?

    /// An e-reader's screen and what suits it.
    struct Device {
        var screen: Box
        /// On a 6-7" screen a scan's margin costs the page size it shrinks; a 10-13" screen can spare it.
        var cropsMargins: Bool
    }

    /// Portrait screens in pixels, all e-ink in gray; every one splits spreads and cuts strips
    /// (a spread or a webtoon page shrunk whole onto a portrait e-ink screen is unreadable).
    static let devices: [String: Device] = [
        "kobo-libra-2": Device(screen: Box(width: 1264, height: 1680), cropsMargins: true),
        "kobo-clara": Device(screen: Box(width: 1072, height: 1448), cropsMargins: true),
        "kindle-paperwhite": Device(screen: Box(width: 1236, height: 1648), cropsMargins: true),
        "kindle-scribe": Device(screen: Box(width: 1860, height: 2480), cropsMargins: false),
        "remarkable-2": Device(screen: Box(width: 1404, height: 1872), cropsMargins: false),
        "pocketbook-era": Device(screen: Box(width: 1264, height: 1680), cropsMargins: true),
        "boox-note-air": Device(screen: Box(width: 1404, height: 1872), cropsMargins: false),
    ]

    struct Box: Equatable {
        var width: Int
        var height: Int
    }

    func validate() throws {
        if let device, Self.devices[device] == nil {
            throw ValidationError("--device \(device): not a known reader; one of \(Self.devices.keys.sorted().joined(separator: ", "))")
        }
        if strips == true && fit == nil && device == nil {
            throw ValidationError("--strips cuts pages one screen high: give the screen with --fit WxH or --device")
        }
    }

    var conversion: PageConversion {
        let profile = device.flatMap { Self.devices[$0] }
        let screen = fit ?? profile?.screen
        return PageConversion(format: pages, fitWidth: screen?.width, fitHeight: screen?.height, grayscale: grayscale || profile != nil,
                              splitSpreads: splitSpreads ?? (profile != nil), rightToLeft: rtl,
                              cropMargins: cropMargins ?? (profile?.cropsMargins ?? false), strips: strips ?? (profile != nil))
    }
}

extension PageConversion.Format: ExpressibleByArgument {}

/// "1264x1680": a box in pixels, each side 16 to 20,000.
func parseBox(_ text: String) throws -> PageOptions.Box {
    let sides = text.lowercased().split(separator: "x").compactMap { Int($0) }
    guard sides.count == 2, sides.allSatisfy({ (16...20_000).contains($0) }) else {
        throw ValidationError("'\(text)' is not a box: use WIDTHxHEIGHT in pixels, like 1264x1680")
    }
    return PageOptions.Box(width: sides[0], height: sides[1])
}

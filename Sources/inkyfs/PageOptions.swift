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

    @Option(help: ArgumentHelp("Pages for an e-reader's screen: its --fit, in grayscale (an explicit --fit wins). "
                               + "One of: \(PageOptions.devices.keys.sorted().joined(separator: ", ")); -o device=.",
                               valueName: "name"))
    var device: String?

    /// Portrait screens in pixels, all e-ink in gray.
    static let devices: [String: Box] = [
        "kobo-libra-2": Box(width: 1264, height: 1680), "kobo-clara": Box(width: 1072, height: 1448),
        "kindle-paperwhite": Box(width: 1236, height: 1648), "kindle-scribe": Box(width: 1860, height: 2480),
        "remarkable-2": Box(width: 1404, height: 1872), "pocketbook-era": Box(width: 1264, height: 1680),
        "boox-note-air": Box(width: 1404, height: 1872),
    ]

    struct Box: Equatable {
        var width: Int
        var height: Int
    }

    /// Settings given in -o (the fstab way) count like the flags.
    mutating func apply(_ settings: [String: String]) throws {
        if let value = settings["pages"] {
            guard let format = PageConversion.Format(rawValue: value) else { throw ValidationError("-o pages=\(value): original or jpeg") }
            pages = format
        }
        if let value = settings["fit"] { fit = try parseBox(value) }
        if let value = settings["device"] { device = value }
        if let value = settings["grayscale"] {
            guard value == "0" || value == "1" else { throw ValidationError("-o grayscale=\(value): 0 or 1") }
            grayscale = value == "1"
        }
    }

    func validate() throws {
        if let device, Self.devices[device] == nil {
            throw ValidationError("--device \(device): not a known reader; one of \(Self.devices.keys.sorted().joined(separator: ", "))")
        }
    }

    var conversion: PageConversion {
        let screen = fit ?? device.flatMap { Self.devices[$0] }
        return PageConversion(format: pages, fitWidth: screen?.width, fitHeight: screen?.height, grayscale: grayscale || device != nil)
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

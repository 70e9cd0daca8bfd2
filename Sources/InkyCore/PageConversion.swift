/// What pages become on the way out, for viewers and e-readers that open only JPEG and PNG
/// (`--pages jpeg`) or want pages made for their screen (`--fit`, `--grayscale`). A converted
/// page's size is known only once it is encoded, as a rendered PDF page's: it is listed with
/// `Page.sizeAfterRendering` and encoded in a worker at its first lookup.
public struct PageConversion: Sendable, Equatable, Hashable, Codable {
    public enum Format: String, Sendable, Codable, CaseIterable {
        /// Page bytes as the archive holds them.
        case original
        /// Pages that are not JPEG or PNG become JPEG (a GIF becomes PNG).
        case jpeg
    }

    public var format: Format
    /// The box every page is shrunk into (never enlarged), keeping its shape.
    public var fitWidth: Int?
    public var fitHeight: Int?
    public var grayscale: Bool
    /// A landscape page (a two-page spread) becomes two pages, its halves in reading order.
    public var splitSpreads: Bool
    /// Every comic is read right to left, whatever its ComicInfo says (`--rtl`).
    public var rightToLeft: Bool
    /// Uniform borders (a scanner's) are trimmed before fitting.
    public var cropMargins: Bool
    /// A page far taller than the fit box (a webtoon strip) becomes screen-high pages.
    public var strips: Bool

    public init(format: Format = .original, fitWidth: Int? = nil, fitHeight: Int? = nil, grayscale: Bool = false,
                splitSpreads: Bool = false, rightToLeft: Bool = false, cropMargins: Bool = false, strips: Bool = false) {
        self.format = format
        self.fitWidth = fitWidth
        self.fitHeight = fitHeight
        self.grayscale = grayscale
        self.splitSpreads = splitSpreads
        self.rightToLeft = rightToLeft
        self.cropMargins = cropMargins
        self.strips = strips
    }

    public static let none = PageConversion()

    /// True when any page may be served other than as its archive's bytes.
    public var isActive: Bool { self != .none }
    /// Every page is re-encoded (a device profile), not only the ones in other formats.
    public var convertsEveryPage: Bool { fitWidth != nil || fitHeight != nil || grayscale || cropMargins }
    /// Pages may become several (`PagePiece`): the listing reads every page's dimensions.
    public var cutsPages: Bool { splitSpreads || (strips && fitHeight != nil) }

    /// Extensions served as they are by `--pages jpeg`.
    static let servedAsIs: Set<String> = ["jpg", "jpeg", "png"]
    /// Palette formats (line art, flat colours): PNG keeps them exact and small where JPEG smears.
    static let servedAsPNG: Set<String> = ["png", "gif"]

    /// The extension a page named `name` is served with, or nil when it is served as it is.
    /// Decided from the name alone, before any byte is decoded, so listing never converts.
    public func convertedExtension(of name: String) -> String? {
        guard isActive else { return nil }
        let ext = EntryPath.lowercasedExtension(of: name)
        if !convertsEveryPage && Self.servedAsIs.contains(ext) { return nil }
        return Self.servedAsPNG.contains(ext) ? "png" : "jpg"
    }

    /// The extension a piece of a cut page (`PagePiece`) is served with: it is always encoded.
    public func cutExtension(of name: String) -> String {
        convertedExtension(of: name) ?? (Self.servedAsPNG.contains(EntryPath.lowercasedExtension(of: name)) ? "png" : "jpg")
    }

    /// `name` with its extension replaced: `007.webp` → `007.jpg`, keeping the number, so the order.
    public static func renamed(_ name: String, to ext: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "\(name).\(ext)" }
        return "\(name[..<dot]).\(ext)"
    }
}

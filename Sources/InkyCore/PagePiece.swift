/// One of the pages a source page becomes under a device profile: a half of a two-page spread
/// (`--split-spreads`) or a screen-high strip of a webtoon page (`--strips`). How many pieces a
/// page makes is decided at listing time from its dimensions alone (`ImageDimensions`), so a
/// listing never encodes; the cut itself happens at the page's first lookup, in a worker.
///
/// A page knows its piece beside its archive entry (`Page.piece`, `PageSource`): the daemon sorts
/// reads and matches a worker's replies by the pair, and the worker gets the piece in the request.
public struct PagePiece: Sendable, Equatable, Hashable {
    public enum Cut: String, Sendable, Equatable, Hashable, Codable {
        /// Across the width: a spread's halves.
        case spread
        /// Across the height: strips, top to bottom.
        case strip
    }

    public var cut: Cut
    /// Position in reading order among the source page's pieces, from 0.
    public var part: Int
    public var count: Int
    /// A spread read right to left: its right half comes first.
    public var rightToLeft: Bool

    public init(cut: Cut, part: Int, count: Int, rightToLeft: Bool = false) {
        self.cut = cut
        self.part = part
        self.count = count
        self.rightToLeft = rightToLeft
    }

    /// A page never becomes more pieces than this: a 60,000-pixel strip is cut into pieces
    /// taller than the screen (which fitting then shrinks) rather than into hundreds of pages.
    public static let maxCount = 100
    /// A page is cut into strips when, shrunk to the fit box's width, it is taller than this many
    /// fit boxes (a tall page slightly over the screen is only shrunk, as any page).
    public static let stripFactor = 2

    /// A piece a listing can hold: at least two parts, at most `maxCount`, this one among them.
    /// What comes from outside (a worker's frame, a stored listing) is checked with this.
    public var isWellFormed: Bool { (2...Self.maxCount).contains(count) && (0..<count).contains(part) }

    /// The pieces a `width` × `height` page becomes, in reading order; empty when it stays whole.
    public static func pieces(width: Int, height: Int, conversion: PageConversion, rightToLeft: Bool) -> [PagePiece] {
        guard width > 0, height > 0 else { return [] }
        if conversion.splitSpreads && width > height {
            return (0..<2).map { PagePiece(cut: .spread, part: $0, count: 2, rightToLeft: rightToLeft) }
        }
        guard conversion.strips, let boxHeight = conversion.fitHeight else { return [] }
        // The height the page has once shrunk to the box's width (never enlarged).
        let scale = min(1, Double(conversion.fitWidth ?? width) / Double(width))
        let fitted = Double(height) * scale
        guard fitted > Double(stripFactor * boxHeight) else { return [] }
        let count = min(maxCount, Int((fitted / Double(boxHeight)).rounded(.up)))
        return (0..<count).map { PagePiece(cut: .strip, part: $0, count: count) }
    }

    /// Which piece this is counted left to right (spread) or top to bottom (strip).
    public var position: Int { cut == .spread && rightToLeft ? count - 1 - part : part }

    /// `007.jpg` → `007-1.jpg`, `007-2.jpg` (zero-padded to the count's width, so `007-02` sorts
    /// before `007-10`). The source page's number stays in the name, so a page that is not cut
    /// keeps its name with or without the profile, and `-` sorts before `.` and every digit, so
    /// byte order is still reading order.
    public func name(for name: String) -> String {
        let digits = String(part + 1)
        let suffix = "-" + String(repeating: "0", count: max(0, String(count).count - digits.count)) + digits
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name + suffix }
        return "\(name[..<dot])\(suffix)\(name[dot...])"
    }
}

/// How a page that is not a stored image (a PDF page of text or vector art) becomes one: a PNG
/// `height` pixels high (the width follows the page's shape), or at `dpi` when that is set.
/// A page's rendered size depends on these settings, so a listing records the ones its sizes
/// were measured with; and so does a converted page's (`conversion`, `--pages`, `--fit`...).
public struct PageRendering: Sendable, Equatable, Codable {
    public var height: Int
    public var dpi: Int?
    public var conversion: PageConversion

    public init(height: Int = 2_700, dpi: Int? = nil, conversion: PageConversion = .none) {
        self.height = height
        self.dpi = dpi
        self.conversion = conversion
    }

    public static let `default` = PageRendering()

    /// No rendered page gets more pixels than this (a poster-sized page at 200 dpi would).
    public static let maxPixels: Int64 = 64_000_000
}

/// The size a page fitted to a box and encoded as JPEG is listed with before any page is
/// encoded, so that `ls -l` of a comic (its pages' sizes) or of its folder under `--as cbz` (the
/// CBZ's size) answers at once: measured, the first `ls -l` of a 24-page comic under
/// `--device kobo-clara` encoded every page and took 8 s. The worker encodes the page to fit
/// (at a lower JPEG quality for the rare page that would not) and pads it to exactly this size
/// with JPEG comment segments, which every decoder skips. Pages served as PNG (PNG and GIF
/// pages, kept lossless) and conversions without a whole box keep the size they encode to.
public extension PageConversion {
    /// Bits per pixel of the box a fitted page may take: 3 in gray (line art and screentones at
    /// JPEG quality 85 take 2 to 2.8: the corpus's 24-page comic at most 2.73 on kobo-clara's
    /// box), 4.5 in colour (4:2:0 chroma adds about half). A page smaller than the box takes less.
    static let budgetBitsPerPixel = (gray: 3.0, colour: 4.5)
    /// Headers, tables and the comment's own markers.
    static let budgetOverhead: Int64 = 4096

    /// The listed size of a page of `sourceBytes` bytes named `sourceName` that this conversion
    /// encodes as JPEG; nil where the size is the encoder's (no whole box). A JPEG page gets at
    /// most a quarter more than its own bytes (fewer pixels and one channel seldom need more).
    func sizeBudget(sourceBytes: Int64, sourceName: String) -> Int64? {
        guard let width = fitWidth, let height = fitHeight, width > 0, height > 0 else { return nil }
        let bits = grayscale ? Self.budgetBitsPerPixel.gray : Self.budgetBitsPerPixel.colour
        let box = Int64((Double(width) * Double(height) * bits / 8).rounded(.up)) + Self.budgetOverhead
        let ext = EntryPath.lowercasedExtension(of: sourceName)
        guard ext == "jpg" || ext == "jpeg", sourceBytes > 0 else { return box }
        return min(box, max(sourceBytes + sourceBytes / 4, 64 << 10) + Self.budgetOverhead)
    }
}

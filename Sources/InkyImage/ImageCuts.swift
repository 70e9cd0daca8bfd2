internal import CInkyVips

/// Part of an image to keep: piece `position` of `count`, counted left to right across the
/// width (`vertical == false`, a spread's halves) or top to bottom down the height (strips).
public struct ImagePiece: Sendable, Equatable {
    public var vertical: Bool
    public var position: Int
    public var count: Int

    public init(vertical: Bool, position: Int, count: Int) {
        self.vertical = vertical
        self.position = position
        self.count = count
    }
}

/// Cuts made before fitting: uniform borders trimmed (`--crop-margins`), then one piece kept.
/// The whole image is decoded once here (no shrink-on-load: the cut is in source pixels).
enum ImageCuts {
    /// A pixel differs from the border's colour when a band differs by more than this: scanner
    /// noise and JPEG ringing in a white margin stay under it.
    static let trimThreshold = 24.0
    /// A row is blank when its lightest and darkest pixels differ by at most this.
    static let blankRowRange: UInt8 = 16
    /// How far a strip's cut may move to reach a blank row, as a fraction of the strip's height.
    static let cutTolerance = 6

    /// `fit`: the box the result is shrunk into, so that no strip is cut taller than it holds.
    static func cut(_ raw: UnsafeRawBufferPointer, cropMargins: Bool, piece: ImagePiece?, fit: ImageSize?) throws(ImageError) -> VipsImageHandle {
        var image = try VipsImageHandle.make(ImageError.undecodable) { inky_vips_load_upright(raw.baseAddress, raw.count, $0) }
        if cropMargins { image = try trimmed(image) }
        guard let piece, piece.count > 1, (0..<piece.count).contains(piece.position) else { return image }
        let whole = image
        if !piece.vertical {
            let left = whole.width * piece.position / piece.count, right = whole.width * (piece.position + 1) / piece.count
            return try extract(whole, left: left, top: 0, width: right - left, height: whole.height)
        }
        // The rows a strip holds at the box's width (never enlarged).
        let maxRows = fit.map { whole.width > $0.width ? $0.height * whole.width / $0.width : $0.height } ?? whole.height
        let cuts = try stripCuts(whole, through: piece.position + 1, of: piece.count, maxRows: max(1, maxRows))
        return try extract(whole, left: 0, top: cuts[piece.position], width: whole.width,
                           height: max(1, cuts[piece.position + 1] - cuts[piece.position]))
    }

    /// The rows where strips 0 through `last` start (`count` for the image's end), from the top:
    /// each the nominal equal cut moved to the nearest blank row within the tolerance, so a cut
    /// runs through a gutter rather than a panel or a line of text, but never so far that a strip
    /// holds more than `maxRows` or leaves the strips after it more than they hold. Every piece
    /// of a page computes the same cuts, so the pieces neither overlap nor leave a row out.
    static func stripCuts(_ image: VipsImageHandle, through last: Int, of count: Int, maxRows: Int) throws(ImageError) -> [Int] {
        let height = image.height
        var cuts = [0]
        for index in 1...last {
            guard index < count else {
                cuts.append(height)
                break
            }
            let previous = cuts[index - 1]
            let nominal = height * index / count, reach = height / count / cutTolerance
            let low = max(nominal - reach, previous + 1, height - (count - index) * maxRows)
            let high = min(nominal + reach, previous + maxRows, height - 1)
            guard low <= high else {
                cuts.append(min(max(nominal, previous + 1), previous + maxRows))
                continue
            }
            let aim = min(max(nominal, low), high)
            let rows = try grayRows(image, top: low, height: high - low + 1)
            cuts.append(nearestBlank(rows, width: image.width, around: aim - low).map { low + $0 } ?? aim)
        }
        return cuts
    }

    /// The image inside its uniform border; the image itself when it has none, or when all of it
    /// is border (a blank page).
    private static func trimmed(_ image: VipsImageHandle) throws(ImageError) -> VipsImageHandle {
        var left: Int32 = 0, top: Int32 = 0, width: Int32 = 0, height: Int32 = 0
        guard inky_vips_find_trim(image.pointer, trimThreshold, &left, &top, &width, &height) == 0 else {
            throw .undecodable(VipsRuntime.takeError())
        }
        guard width > 0, height > 0, Int(width) < image.width || Int(height) < image.height else { return image }
        return try extract(image, left: Int(left), top: Int(top), width: Int(width), height: Int(height))
    }

    private static func extract(_ image: VipsImageHandle, left: Int, top: Int, width: Int, height: Int) throws(ImageError) -> VipsImageHandle {
        try VipsImageHandle.make(ImageError.undecodable) {
            inky_vips_extract(image.pointer, Int32(left), Int32(top), Int32(width), Int32(height), $0)
        }
    }

    /// The blank row nearest `row` in `rows` (`width` gray bytes each), nearer above on a tie.
    static func nearestBlank(_ rows: [UInt8], width: Int, around row: Int) -> Int? {
        guard width > 0 else { return nil }
        let count = rows.count / width
        let isBlank = { (line: Int) -> Bool in
            let slice = rows[line * width..<(line + 1) * width]
            guard let low = slice.min(), let high = slice.max() else { return false }
            return high - low <= blankRowRange
        }
        for distance in 0...max(row, count - row) {
            for line in [row - distance, row + distance] where (0..<count).contains(line) && isBlank(line) { return line }
        }
        return nil
    }

    private static func grayRows(_ image: VipsImageHandle, top: Int, height: Int) throws(ImageError) -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard inky_vips_gray_rows(image.pointer, Int32(top), Int32(height), &buffer, &length) == 0, let buffer else {
            throw .undecodable(VipsRuntime.takeError())
        }
        defer { inky_vips_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }
}

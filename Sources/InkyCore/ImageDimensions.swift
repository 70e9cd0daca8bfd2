/// A page's width and height read from its first bytes, without an image library: the listing
/// of a device profile that cuts pages (`PagePiece`) needs every page's shape, and decoding
/// hundreds of pages to learn it would cost what the conversion costs. JPEG (with its EXIF
/// orientation, which turns the page as viewers and libvips do), PNG, GIF, WebP and BMP are read
/// here; other formats are `.unrecognized` and the worker asks libvips for their header.
/// The bytes are a hostile archive's: every offset is checked, and a header that declares no
/// pixels or more than `maxPixels` is `.refused` (a decompression bomb declares its size first).
public enum ImageDimensions: Equatable, Sendable {
    case size(width: Int, height: Int)
    case unrecognized
    case refused(String)

    public static func read(_ bytes: [UInt8], maxPixels: Int64) -> ImageDimensions {
        let found: ImageDimensions
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            found = png(bytes)
        } else if bytes.starts(with: Array("GIF8".utf8)) {
            found = bytes.count >= 10 ? .size(width: le16(bytes, 6), height: le16(bytes, 8)) : .refused("truncated GIF header")
        } else if bytes.starts(with: [0xFF, 0xD8]) {
            found = JPEGHeader.dimensions(bytes)
        } else if bytes.starts(with: Array("RIFF".utf8)), bytes.count >= 12, Array(bytes[8..<12]) == Array("WEBP".utf8) {
            found = webp(bytes)
        } else if bytes.starts(with: Array("BM".utf8)) {
            found = bmp(bytes)
        } else {
            return .unrecognized
        }
        guard case .size(let width, let height) = found else { return found }
        guard width > 0, height > 0 else { return .refused("\(width) × \(height) pixels") }
        // Each side up to 2^32 - 1 (a PNG's): the product of two could overflow, so it is checked.
        let pixels = Int64(width).multipliedReportingOverflow(by: Int64(height))
        guard !pixels.overflow, pixels.partialValue <= maxPixels else {
            return .refused("\(width) × \(height) pixels, more than the limit of \(maxPixels)")
        }
        return found
    }

    private static func png(_ bytes: [UInt8]) -> ImageDimensions {
        guard bytes.count >= 24, Array(bytes[12..<16]) == Array("IHDR".utf8) else { return .refused("truncated PNG header") }
        return .size(width: be32(bytes, 16), height: be32(bytes, 20))
    }

    private static func webp(_ bytes: [UInt8]) -> ImageDimensions {
        guard bytes.count >= 30 else { return .refused("truncated WebP header") }
        switch String(decoding: bytes[12..<16], as: UTF8.self) {
        case "VP8 ":
            // A key frame's start code, then 14-bit width and height.
            guard Array(bytes[23..<26]) == [0x9D, 0x01, 0x2A] else { return .refused("WebP VP8 frame without its start code") }
            return .size(width: le16(bytes, 26) & 0x3FFF, height: le16(bytes, 28) & 0x3FFF)
        case "VP8L":
            guard bytes[20] == 0x2F else { return .refused("WebP VP8L without its signature") }
            let bits = le32(bytes, 21)
            return .size(width: bits & 0x3FFF + 1, height: bits >> 14 & 0x3FFF + 1)
        case "VP8X":
            return .size(width: le24(bytes, 24) + 1, height: le24(bytes, 27) + 1)
        default:
            return .refused("WebP without a VP8, VP8L or VP8X chunk first")
        }
    }

    private static func bmp(_ bytes: [UInt8]) -> ImageDimensions {
        guard bytes.count >= 26 else { return .refused("truncated BMP header") }
        let header = le32(bytes, 14)
        if header == 12 { return .size(width: le16(bytes, 18), height: le16(bytes, 20)) }
        // Height is negative for a top-down bitmap.
        let height = Int(Int32(bitPattern: UInt32(le32(bytes, 22))))
        return .size(width: Int(Int32(bitPattern: UInt32(le32(bytes, 18)))), height: height == Int(Int32.min) ? 0 : abs(height))
    }

    static func le16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    static func le24(_ bytes: [UInt8], _ at: Int) -> Int { le16(bytes, at) | Int(bytes[at + 2]) << 16 }
    static func le32(_ bytes: [UInt8], _ at: Int) -> Int { le24(bytes, at) | Int(bytes[at + 3]) << 24 }
    static func be16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
    static func be32(_ bytes: [UInt8], _ at: Int) -> Int { be16(bytes, at) << 16 | be16(bytes, at + 2) }
}

/// A JPEG's frame header (SOFn) and EXIF orientation, found by walking its markers.
enum JPEGHeader {
    static func dimensions(_ bytes: [UInt8]) -> ImageDimensions {
        var at = 2
        var turned = false
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return .refused("JPEG marker expected at byte \(at)") }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue } // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { at += 2; continue }
            let length = ImageDimensions.be16(bytes, at + 2)
            guard length >= 2 else { return .refused("JPEG segment of length \(length)") }
            let body = at + 4
            if marker == 0xE1, body + length - 2 <= bytes.count {
                turned = orientation(bytes, from: body, to: body + length - 2).map { (5...8).contains($0) } ?? turned
            }
            // SOF0–SOF15 but DHT (C4), JPG (C8) and DAC (CC).
            if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard body + 5 <= bytes.count else { return .refused("truncated JPEG frame header") }
                let height = ImageDimensions.be16(bytes, body + 1), width = ImageDimensions.be16(bytes, body + 3)
                return turned ? .size(width: height, height: width) : .size(width: width, height: height)
            }
            if marker == 0xDA || marker == 0xD9 { return .refused("JPEG without a frame header before its scan") }
            at = body + length - 2
        }
        return .refused("truncated JPEG header")
    }

    /// The EXIF orientation tag (0x0112) of IFD0 in an APP1 segment, if it has one.
    static func orientation(_ bytes: [UInt8], from start: Int, to end: Int) -> Int? {
        guard end - start >= 14, Array(bytes[start..<start + 6]) == Array("Exif\0\0".utf8) else { return nil }
        let tiff = start + 6
        let little: Bool
        switch (bytes[tiff], bytes[tiff + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        let u16 = { (at: Int) -> Int? in at + 2 <= end ? (little ? ImageDimensions.le16(bytes, at) : ImageDimensions.be16(bytes, at)) : nil }
        let u32 = { (at: Int) -> Int? in at + 4 <= end ? (little ? ImageDimensions.le32(bytes, at) : ImageDimensions.be32(bytes, at)) : nil }
        guard let offset = u32(tiff + 4), offset < end - tiff, let entries = u16(tiff + offset) else { return nil }
        for index in 0..<min(entries, 512) {
            let entry = tiff + offset + 2 + index * 12
            guard let tag = u16(entry) else { return nil }
            if tag == 0x0112 { return u16(entry + 8) }
        }
        return nil
    }
}

/// Builds a PNG file around zlib data that already is a PNG's image data: a PDF image stream
/// compressed with Flate and a PNG predictor holds exactly the bytes of a PNG's IDAT chunks
/// (img2pdf embeds PNGs that way). The file is signature, IHDR, one IDAT, IEND: byte for byte
/// the original when the original had a single IDAT and no ancillary chunks.
enum PNGFile {
    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Signature, IHDR (12 + 13), IDAT (12 + data) and IEND (12).
    static func size(idatLength: Int64) -> Int64 { 8 + 25 + 12 + idatLength + 12 }

    /// nil when the data is too large for one chunk.
    static func wrap(idat: [UInt8], width: Int, height: Int, bitDepth: Int, colors: Int) -> [UInt8]? {
        guard idat.count < Int(Int32.max), width > 0, height > 0, colors == 1 || colors == 3 else { return nil }
        var header: [UInt8] = []
        header += bigEndian(UInt32(width))
        header += bigEndian(UInt32(height))
        // Colour type 0 is greyscale, 2 truecolour; compression, filter and interlace are 0.
        header += [UInt8(bitDepth), colors == 1 ? 0 : 2, 0, 0, 0]
        var file = signature
        file.reserveCapacity(Int(size(idatLength: Int64(idat.count))))
        appendChunk("IHDR", header, to: &file)
        appendChunk("IDAT", idat, to: &file)
        appendChunk("IEND", [], to: &file)
        return file
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        file += bigEndian(UInt32(data.count))
        file += typeBytes
        file += data
        var crc = CRC32()
        crc.update(typeBytes)
        crc.update(data)
        file += bigEndian(crc.value)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// CRC-32 as PNG (and zlib) define it: reflected polynomial 0xEDB88320.
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    private var state: UInt32 = 0xFFFF_FFFF

    mutating func update(_ bytes: [UInt8]) {
        let table = Self.table
        var crc = state
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        state = crc
    }

    var value: UInt32 { state ^ 0xFFFF_FFFF }
}

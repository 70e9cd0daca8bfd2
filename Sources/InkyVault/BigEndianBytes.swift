/// Every integer in every vault file is big-endian, so the byte layouts in
/// docs/vault-format.md read the same on any machine and in any language.
extension Array where Element == UInt8 {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}

/// Reads fixed-width fields from the front of a byte string, in order. Every read is
/// bounds-checked and returns nil when the bytes run out, so a short or hostile file can
/// only ever produce "damaged", never a crash.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    mutating func read(_ count: Int) -> [UInt8]? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func readBigEndian<T: FixedWidthInteger>(_: T.Type = T.self) -> T? {
        guard let field = read(MemoryLayout<T>.size) else { return nil }
        return field.reduce(T.zero) { $0 << 8 | T($1) }
    }
}

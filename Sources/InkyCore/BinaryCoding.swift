/// The byte-level pieces of inkyfs's binary formats (`ListingCodec` for the index, `WorkerCodec`
/// for the worker protocol): varints, zigzag integers, fixed-width little-endian integers,
/// length-prefixed UTF-8. The reader is for bytes from anyone: every read checks what is left
/// and returns nil rather than trapping, and no count it returns exceeds the bytes left, so
/// nothing a reader allocates from a count can outgrow its input.
public struct BinaryWriter {
    public var bytes: [UInt8] = []

    public init() {}

    /// A writer whose bytes already begin with `prefix` (a frame header patched at the end).
    public init(prefix: [UInt8]) { bytes = prefix }

    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    public mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Zigzag, so -1 (a size known only after rendering) is one byte.
    public mutating func signed(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    /// Eight bytes, little-endian, whatever the value.
    public mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    public mutating func string(_ text: String) {
        varint(UInt64(text.utf8.count))
        bytes.append(contentsOf: text.utf8)
    }

    /// At most `maxBytes` of `text`, cut at a character's scalar boundary: a peer that refuses
    /// longer text still gets the start of an honest message rather than none of it.
    public mutating func string(_ text: String, maxBytes: Int) {
        guard text.utf8.count > maxBytes else { return string(text) }
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: maxBytes)
        while end > text.utf8.startIndex && UTF8.isContinuation(text.utf8[end]) { end = text.utf8.index(before: end) }
        string(String(text.utf8[..<end]) ?? "")
    }

    public mutating func optional<T>(_ value: T?, _ write: (inout BinaryWriter, T) -> Void) {
        guard let value else { return byte(0) }
        byte(1)
        write(&self, value)
    }
}

public struct BinaryReader {
    private let bytes: [UInt8]
    private var at = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { at == bytes.count }

    /// How many bytes are left to read: what follows a header, for a reader of its own.
    public var remaining: Int { bytes.count - at }

    public mutating func byte() -> UInt8? {
        guard at < bytes.count else { return nil }
        defer { at += 1 }
        return bytes[at]
    }

    public mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            guard let next = byte() else { return nil }
            value |= UInt64(next & 0x7F) << UInt64(shift)
            if next < 0x80 { return value }
        }
        return nil
    }

    public mutating func signed() -> Int64? {
        varint().map { Int64(bitPattern: ($0 >> 1) ^ (0 &- ($0 & 1))) }
    }

    public mutating func fixed64() -> UInt64? {
        guard bytes.count - at >= 8 else { return nil }
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) {
            value |= UInt64(bytes[at]) << UInt64(shift)
            at += 1
        }
        return value
    }

    /// A count of things that each take at least one byte: never more than the bytes left.
    public mutating func count() -> Int? {
        guard let value = varint(), value <= UInt64(bytes.count - at) else { return nil }
        return Int(value)
    }

    /// Valid UTF-8 of at most `maxBytes` (and never more than is left), else nil.
    public mutating func string(maxBytes: Int = .max) -> String? {
        guard let length = count(), length <= maxBytes else { return nil }
        defer { at += length }
        return String(validating: bytes[at..<at + length], as: UTF8.self)
    }

    /// nil when malformed; `.some(nil)` for an absent value.
    public mutating func optional<T>(_ read: (inout BinaryReader) -> T?) -> T?? {
        switch byte() {
        case 0: return .some(nil)
        case 1: return read(&self).map { .some($0) }
        default: return nil
        }
    }
}

import InkyCore

/// Reads a 7z header's bytes. Every read is checked against the end: a header that lies about
/// its own length fails as `.corrupted` instead of reading past it.
struct SevenZipCursor {
    let path: String
    private let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8], path: String) {
        self.bytes = bytes
        self.path = path
    }

    var remaining: Int { bytes.count - position }

    func corrupted(_ detail: String) -> ComicError { .corrupted(path: path, detail: "7z header: \(detail)") }

    mutating func byte() throws(ComicError) -> UInt8 {
        guard position < bytes.count else { throw corrupted("ends early") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func bytes(_ count: Int) throws(ComicError) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw corrupted("a field runs past the header's end") }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    mutating func skip(_ count: UInt64) throws(ComicError) {
        guard count <= UInt64(remaining) else { throw corrupted("a property runs past the header's end") }
        position += Int(count)
    }

    mutating func uint32() throws(ComicError) -> UInt32 {
        try bytes(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A fixed 8-byte little-endian size (the start header's), which must fit in Int64.
    mutating func fixedSize() throws(ComicError) -> Int64 {
        let value = try bytes(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard value <= UInt64(Int64.max) else { throw corrupted("a size of \(value) bytes") }
        return Int64(value)
    }

    /// 7z's variable-length number: the first byte's leading one bits count the bytes that follow.
    mutating func number() throws(ComicError) -> UInt64 {
        let first = try byte()
        var mask: UInt8 = 0x80
        var value: UInt64 = 0
        for index in 0..<8 {
            if first & mask == 0 {
                return value | UInt64(first & (mask &- 1)) << (8 * index)
            }
            value |= UInt64(try byte()) << (8 * index)
            mask >>= 1
        }
        return value
    }

    /// A size, which must fit in Int64 (a 7z number may claim up to 2^64-1).
    mutating func size() throws(ComicError) -> Int64 {
        let value = try number()
        guard value <= UInt64(Int64.max) else { throw corrupted("a size of \(value) bytes") }
        return Int64(value)
    }

    /// A count bounded by `limit` (never allocate what a header merely claims) and by the bytes
    /// left, when each counted item takes at least `bytesEach` of them.
    mutating func count(limit: Int, bytesEach: Int = 1, what: String) throws(ComicError) -> Int {
        let value = try number()
        guard value <= UInt64(limit) else { throw ComicError.limitExceeded(path: path, detail: "7z header claims \(value) \(what)") }
        guard Int(value) * bytesEach <= remaining else { throw corrupted("\(value) \(what) do not fit in the header") }
        return Int(value)
    }

    /// `count` bits, most significant first, as 7z packs its per-item flags.
    mutating func bits(_ count: Int) throws(ComicError) -> [Bool] {
        let packed = try bytes((count + 7) / 8)
        return (0..<count).map { packed[$0 / 8] & (0x80 >> UInt8($0 % 8)) != 0 }
    }

    /// An "all defined" byte, then the bit vector only when it is 0.
    mutating func definedBits(_ count: Int) throws(ComicError) -> [Bool] {
        try byte() != 0 ? Array(repeating: true, count: count) : bits(count)
    }

    /// CRCs for the items `defined` marks (after its all-defined byte and bits).
    mutating func digests(_ count: Int) throws(ComicError) -> [UInt32?] {
        var result: [UInt32?] = []
        for isDefined in try definedBits(count) { result.append(isDefined ? try uint32() : nil) }
        return result
    }
}

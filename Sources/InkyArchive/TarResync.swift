import InkyCore

/// A TAR whose first member header is damaged. libarchive recognises a TAR by its first
/// header's checksum, so one bad member there lost the whole comic ("Unrecognized archive
/// format"), where a bad header further on costs only its member (libarchive steps past it).
/// Such a comic is read from the first header whose checksum holds: only the first member is lost.
enum TarResync {
    /// Where to start reading instead of 0: the first 512-byte block after a damaged first
    /// header whose checksum holds, looked for within `limit` bytes; nil when the first header
    /// is fine (or the bytes are no TAR at all: nothing is found).
    static func start(in source: FileSource, limit: Int64) -> Int64? {
        guard let first = try? source.bytes(at: 0, count: 512), first.count == 512, !checksumHolds(first) else { return nil }
        var offset: Int64 = 512
        let end = min(source.size, limit)
        while offset + 512 <= end {
            let count = Int(min(1 << 20, (end - offset) / 512 * 512))
            guard let chunk = try? source.bytes(at: offset, count: count), chunk.count == count else { return nil }
            for block in stride(from: 0, to: count, by: 512) where checksumHolds(Array(chunk[block..<(block + 512)])) {
                return offset + Int64(block)
            }
            offset += Int64(count)
        }
        return nil
    }

    /// POSIX header checksum: the sum of the header's bytes with the checksum field (148..<156)
    /// counted as spaces, written in octal in that field. An all-zero block is the end marker.
    static func checksumHolds(_ block: [UInt8]) -> Bool {
        guard block.count == 512, block.contains(where: { $0 != 0 }) else { return false }
        let field = block[148..<156].prefix { $0 != 0 && $0 != 0x20 }.drop { $0 == 0x20 }
        guard !field.isEmpty, let stored = Int(String(decoding: field, as: UTF8.self), radix: 8) else { return false }
        let sum = block.enumerated().reduce(0) { $0 + (148..<156 ~= $1.offset ? 0x20 : Int($1.element)) }
        return sum == stored
    }
}

/// The bytes of another source from `offset` on.
final class ShiftedBytes: RandomAccessBytes {
    private let base: any RandomAccessBytes
    private let offset: Int64
    let size: Int64

    init(_ base: any RandomAccessBytes, from offset: Int64) {
        self.base = base
        self.offset = offset
        size = max(0, base.size - offset)
    }

    func read(at position: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
        try base.read(at: position + offset, into: buffer, count: count)
    }

    func willNeed(_ ranges: [(offset: Int64, length: Int)]) {
        base.willNeed(ranges.map { ($0.offset + offset, $0.length) })
    }
}

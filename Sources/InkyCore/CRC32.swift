/// ZIP's CRC-32 (reflected polynomial 0xEDB88320, as zlib's `crc32`), slicing by 8 bytes.
///
/// The daemon checks every stored ZIP page it reads straight from the archive with it, so it
/// must keep up with a sequential read (about 270 MB per 400-page comic): eight table lookups
/// per 8 bytes instead of eight dependent steps of one.
public enum CRC32 {
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var value = ~crc
        guard var at = bytes.baseAddress, !bytes.isEmpty else { return crc }
        var left = bytes.count
        let t = table
        while left >= 8 {
            let low = UInt32(littleEndian: at.loadUnaligned(as: UInt32.self)) ^ value
            let high = UInt32(littleEndian: (at + 4).loadUnaligned(as: UInt32.self))
            value = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                ^ t[1 * 256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
            at += 8
            left -= 8
        }
        while left > 0 {
            value = t[Int((value ^ UInt32(at.load(as: UInt8.self))) & 0xFF)] ^ (value >> 8)
            at += 1
            left -= 1
        }
        return ~value
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// Eight 256-entry tables: table k gives the CRC of a byte followed by k zero bytes. Kept
    /// for the life of the process behind a plain pointer: no closure or bounds check in the loop.
    nonisolated(unsafe) private static let table: UnsafePointer<UInt32> = {
        let table = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * 256)
        table.initialize(repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            table[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = table[(slice - 1) * 256 + byte]
                table[slice * 256 + byte] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        return UnsafePointer(table)
    }()
}

/// An encoded page made exactly as long as the size it was listed with (`PageSizeBudget`), in a
/// way every decoder reads past: a JPEG gets comment segments (COM, ITU T.81 B.2.4.5) right after
/// its start marker, or, for the 1 to 3 bytes no segment fits in, fill bytes 0xFF, which T.81
/// B.1.1.2 allows before any marker. Other formats (a page served as its archive's bytes) get
/// zero bytes after their end, which their decoders never reach.
public enum PaddedImage {
    /// `bytes` made `size` long; nil when they are longer already.
    public static func padded(_ bytes: [UInt8], to size: Int) -> [UInt8]? {
        guard bytes.count <= size else { return nil }
        let gap = size - bytes.count
        guard gap > 0 else { return bytes }
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF else {
            return bytes + [UInt8](repeating: 0, count: gap)
        }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        out += bytes[0..<2]
        var left = gap
        if left < 4 {
            out += [UInt8](repeating: 0xFF, count: left)
            left = 0
        }
        while left > 0 {
            // A segment is its marker (2 bytes), its length (2, counting themselves) and at most
            // 65,533 bytes; the last one is left at least its 4 bytes.
            var segment = min(left, 4 + maxCommentBytes)
            if (1...3).contains(left - segment) { segment -= 4 }
            let length = segment - 2
            out += [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)]
            out += [UInt8](repeating: 0x20, count: segment - 4)
            left -= segment
        }
        out += bytes[2...]
        return out
    }

    /// A comment segment's data at most: its length field counts itself and is 16 bits.
    static let maxCommentBytes = 65_533

    /// `bytes` without the padding `padded` would have put there, when padding them again to
    /// their length gives them back exactly; nil otherwise (nothing to take away, or a page whose
    /// own first segments look like padding). The disk cache of converted pages keeps this.
    public static func stripped(_ bytes: [UInt8]) -> [UInt8]? {
        var kept: [UInt8]
        if bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF {
            var at = 2
            while at + 1 < bytes.count, bytes[at] == 0xFF, bytes[at + 1] == 0xFF { at += 1 }
            while at + 3 < bytes.count, bytes[at] == 0xFF, bytes[at + 1] == 0xFE {
                let end = at + 2 + Int(bytes[at + 2]) << 8 + Int(bytes[at + 3])
                guard end <= bytes.count, bytes[(at + 4)..<end].allSatisfy({ $0 == 0x20 }) else { break }
                at = end
            }
            kept = [0xFF, 0xD8] + bytes[at...]
        } else {
            kept = Array(bytes[..<(bytes.lastIndex { $0 != 0 }.map { $0 + 1 } ?? 0)])
        }
        guard kept.count < bytes.count, padded(kept, to: bytes.count) == bytes else { return nil }
        return kept
    }
}

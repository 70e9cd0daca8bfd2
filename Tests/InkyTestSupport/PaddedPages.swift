/// A page as a worker encoded it, from the bytes a mount serves: a page fitted to a box is
/// listed at its size budget and padded to it (`PaddedImage`): JPEG comment segments and fill
/// bytes after its start marker, or zeros after a page served as its archive's bytes.
public enum PaddedPages {
    public static func unpadded(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            return Array(bytes[..<(bytes.lastIndex { $0 != 0 }.map { $0 + 1 } ?? 0)])
        }
        var at = 2
        while at + 1 < bytes.count, bytes[at] == 0xFF, bytes[at + 1] == 0xFF { at += 1 }
        // The pages tests make start with APP0 or a table: every comment right after the start is padding.
        while at + 3 < bytes.count, bytes[at] == 0xFF, bytes[at + 1] == 0xFE {
            at += 2 + Int(bytes[at + 2]) << 8 + Int(bytes[at + 3])
        }
        return [0xFF, 0xD8] + bytes[at...]
    }
}

/// What a comic file really is, decided from its first bytes and never from its extension:
/// a `.cbz` that is really RAR opens, a text file called `.cbr` is rejected.
public enum ArchiveFormat: String, Sendable, Codable, CaseIterable {
    case zip
    case rar4      // RAR 1.5 – 4.x ("Rar!\x1a\x07\x00")
    case rar5      // RAR 5 ("Rar!\x1a\x07\x01\x00")
    case sevenZip = "7z"
    case tar       // plain, or wrapped in one of the compressions below
    case gzip, bzip2, xz, zstd, lzip   // a compressed stream: a tar inside, or nothing we serve
    case folder    // a directory of loose images
    case pdf
    case ace
    case oldRAR    // RAR 1.4 ("RE~^"), before the format we can read

    /// True when we can list and read pages of this format.
    public var isSupported: Bool {
        switch self {
        case .ace, .oldRAR: false
        default: true
        }
    }

    /// What a person calls it, for `scan` output and errors.
    public var displayName: String {
        switch self {
        case .zip: "ZIP"
        case .rar4: "RAR4"
        case .rar5: "RAR5"
        case .sevenZip: "7z"
        case .tar: "TAR"
        case .gzip: "TAR (gzip)"
        case .bzip2: "TAR (bzip2)"
        case .xz: "TAR (xz)"
        case .zstd: "TAR (zstd)"
        case .lzip: "TAR (lzip)"
        case .folder: "folder"
        case .pdf: "PDF"
        case .ace: "ACE"
        case .oldRAR: "RAR 1.4"
        }
    }

    /// How many leading bytes `sniff` looks at: tar's magic sits at offset 257, and a ZIP
    /// behind padding or a small stub shows its first local header within this window.
    public static let sniffLength = 4096

    /// Decides the format from the file's first bytes; nil when it is no archive we know.
    public static func sniff<Bytes: Collection<UInt8>>(_ head: Bytes) -> ArchiveFormat? {
        let bytes = Array(head.prefix(sniffLength))
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + magic.count && Array(bytes[offset..<offset + magic.count]) == magic
        }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06])
            || starts([0x50, 0x4B, 0x07, 0x08]) { return .zip }
        if starts(Array("Rar!\u{1A}\u{07}\u{01}\u{00}".utf8)) { return .rar5 }
        if starts(Array("Rar!\u{1A}\u{07}\u{00}".utf8)) { return .rar4 }
        if starts([0x52, 0x45, 0x7E, 0x5E]) { return .oldRAR }
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return .sevenZip }
        if starts(Array("%PDF-".utf8)) { return .pdf }
        if starts(Array("**ACE**".utf8), at: 7) { return .ace }
        if starts([0x1F, 0x8B]) { return .gzip }
        if starts(Array("BZh".utf8)) { return .bzip2 }
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .xz }
        if starts([0x28, 0xB5, 0x2F, 0xFD]) { return .zstd }
        if starts(Array("LZIP".utf8)) { return .lzip }
        if starts(Array("ustar".utf8), at: 257) || isV7TarHeader(bytes) { return .tar }
        if containsZipLocalHeader(bytes) { return .zip }
        return nil
    }

    /// How many trailing bytes `sniffTail` needs: the ZIP end record (22 bytes) plus the
    /// longest archive comment.
    public static let tailLength = 22 + 65_535

    /// A ZIP with something in front (a self-extractor stub, padding) is found by its
    /// end-of-central-directory record at the end of the file.
    public static func sniffTail(_ tail: [UInt8]) -> ArchiveFormat? {
        var below = tail.count - 21
        while let index = zipEndSignature(in: tail, below: below) {
            let commentLength = Int(tail[index + 20]) | Int(tail[index + 21]) << 8
            if index + 22 + commentLength == tail.count { return .zip }
            below = index
        }
        return nil
    }

    /// The last place below `below` where a whole 22-byte ZIP end-of-central-directory record
    /// ("PK\5\6") can start in `tail`, searching backwards; nil when there is none.
    public static func zipEndSignature(in tail: [UInt8], below: Int) -> Int? {
        stride(from: min(below, tail.count - 21) - 1, through: 0, by: -1).first { at in
            tail[at] == 0x50 && tail[at + 1] == 0x4B && tail[at + 2] == 0x05 && tail[at + 3] == 0x06
        }
    }

    private static func containsZipLocalHeader(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 30 else { return false }
        for index in 0...(bytes.count - 30) where bytes[index] == 0x50 && bytes[index + 1] == 0x4B
            && bytes[index + 2] == 0x03 && bytes[index + 3] == 0x04 {
            return true
        }
        return false
    }

    /// Pre-POSIX tar has no magic; a valid header checksum is the only reliable sign.
    private static func isV7TarHeader(_ block: [UInt8]) -> Bool {
        guard block.count >= 512, block[0] != 0 else { return false }
        let field = block[148..<156]
        let digits = field.prefix { $0 >= 0x30 && $0 <= 0x37 || $0 == 0x20 }
            .filter { $0 != 0x20 }
        guard !digits.isEmpty, let stored = Int(String(decoding: digits, as: UTF8.self), radix: 8)
        else { return false }
        var sum = 0
        for (index, byte) in block.prefix(512).enumerated() {
            sum += (148..<156).contains(index) ? 0x20 : Int(byte)
        }
        return sum == stored
    }
}

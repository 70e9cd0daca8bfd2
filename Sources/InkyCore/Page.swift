/// One page of a comic as the mount shows it.
public struct Page: Sendable, Equatable, Hashable, Codable {
    /// Position in reading order, from 0.
    public var number: Int
    /// The name under the mount: "001.jpg", zero-padded so byte order is reading order.
    public var name: String
    /// The member's path inside the archive (exposed as the `user.inkyfs.source` xattr).
    public var sourcePath: String
    /// The member's position in stream order: what a backend seeks to. The pieces of a cut page
    /// share their member's.
    public var entryIndex: Int
    /// The part of the member this page is when a device profile cuts it (a spread's half, a
    /// strip); nil for a whole page.
    public var piece: PagePiece?
    /// Exact size in bytes, as declared; reads that produce anything else fail. A page that is
    /// rendered (a PDF page of text or vector art) has `sizeAfterRendering` until it was
    /// rendered once.
    public var size: Int64
    /// Set when the bytes lie unchanged in the archive's bytes (a stored ZIP member, in a library
    /// file or a vault object's plaintext): the daemon reads them itself. nil for everything that
    /// needs a decoder, and in listings made before.
    public var storedData: StoredData?
    /// The CRC-32 of the page's bytes when known: a stored ZIP member's from its directory,
    /// otherwise `learnedCRC32`.
    public var crc32: UInt32? {
        get { storedData?.crc32 ?? learnedCRC32 }
        set { learnedCRC32 = newValue }
    }
    /// A CRC-32 from the archive's headers (a ZIP's directory, a RAR5's file header) or computed
    /// from the page's bytes when the comic was first served as a CBZ; nil until then.
    public var learnedCRC32: UInt32?

    /// The size of a page that is known only once it was rendered.
    public static let sizeAfterRendering: Int64 = -1

    public var isSizeKnown: Bool { size >= 0 }

    /// What the page is read from: its member and piece, the order and identity of its reads.
    public var source: PageSource { PageSource(entry: entryIndex, piece: piece) }

    public init(number: Int, name: String, sourcePath: String, entryIndex: Int, piece: PagePiece? = nil, size: Int64,
                storedData: StoredData? = nil) {
        self.number = number
        self.name = name
        self.sourcePath = sourcePath
        self.entryIndex = entryIndex
        self.piece = piece
        self.size = size
        self.storedData = storedData
    }
}

/// Page file names: `001.jpg`, `002.png`, … padded to the width of the page count and at
/// least three digits, so a plain byte-wise sort in any viewer is the reading order.
public enum PageNaming {
    public static func name(number: Int, of count: Int, sourcePath: String) -> String {
        let width = max(3, String(count).count)
        let digits = String(number + 1)
        let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
        let ext = EntryPath.lowercasedExtension(of: EntryPath.components(of: sourcePath).last ?? "")
        return ext.isEmpty ? padded : "\(padded).\(ext)"
    }
}

/// A compact binary form of `ComicListing` for the index: a warm mount reads every comic's
/// listing from SQLite, and decoding 20,000 listings from JSON was most of a warm `ls -lRA`.
/// Varints, length-prefixed UTF-8, one byte per flag; version 3 adds page conversion settings
/// and each page's learned CRC-32; version 4 the device profile's flags (split spreads, right to
/// left, crop margins, strips), and version 3 still decodes (all off); version 5 each cut page's
/// piece beside its entry index, where version 4 packed it into the index (`PackedPageIndex`),
/// which still decodes. Version 1 (neither) still decodes; a version 2 listing (one of
/// the two, written by a development build) does not and is made again. Decoding checks every length
/// against what is left and fails (nil) on anything odd: the index is a cache, and a listing it
/// cannot read is made again.
public enum ListingCodec {
    public static let version: UInt8 = 5

    public static func encode(_ listing: ComicListing) -> [UInt8] {
        var out = BinaryWriter()
        encode(listing, into: &out)
        return out.bytes
    }

    /// `version` 1 leaves out what version 3 added: how an index written by an older inkyfs
    /// looks, for the test that it still reads; 4 packs each piece into its page's entry index.
    static func encode(_ listing: ComicListing, version: UInt8) -> [UInt8] {
        var out = BinaryWriter()
        encode(listing, version: version, into: &out)
        return out.bytes
    }

    /// Appends the listing to `out`, for a message that carries it among other things.
    public static func encode(_ listing: ComicListing, into out: inout BinaryWriter) { encode(listing, version: version, into: &out) }

    static func encode(_ listing: ComicListing, version: UInt8, into out: inout BinaryWriter) {
        out.byte(version)
        out.string(listing.format.rawValue)
        out.byte(listing.isSolid ? 1 : 0)
        out.optional(listing.rendering) { out, rendering in out.rendering(rendering, version: version) }
        out.optional(listing.comicInfo) { out, entry in out.entry(entry) }
        out.varint(UInt64(listing.skipped.count))
        for skipped in listing.skipped {
            out.string(skipped.path)
            out.skipReason(skipped.reason)
        }
        out.varint(UInt64(listing.pages.count))
        let packs = version == 4 && listing.rendering?.conversion.cutsPages == true
        for page in listing.pages {
            out.string(page.name)
            out.string(page.sourcePath)
            out.varint(UInt64(max(0, packs ? PackedPageIndex.packed(page.source) : page.entryIndex)))
            out.signed(page.size)
            out.optional(page.storedData) { out, stored in
                out.signed(stored.offset)
                out.varint(UInt64(stored.crc32))
            }
            if version >= 3 { out.optional(page.learnedCRC32) { out, crc in out.varint(UInt64(crc)) } }
            if version >= 5 { out.optional(page.piece) { out, piece in out.piece(piece) } }
        }
    }

    public static func decode(_ bytes: [UInt8]) -> ComicListing? {
        var input = BinaryReader(bytes)
        guard let listing = decode(from: &input), input.isAtEnd else { return nil }
        return listing
    }

    /// Reads one listing from `input`, leaving what follows it for the caller.
    public static func decode(from input: inout BinaryReader) -> ComicListing? {
        guard let written = input.byte(), written == 1 || (3...version).contains(written), let formatName = input.string(),
              let format = ArchiveFormat(rawValue: formatName), let solid = input.byte() else { return nil }
        guard let rendering = input.optional({ $0.rendering(version: written) }), let comicInfo = input.optional({ $0.entry() }),
              let skippedCount = input.count() else { return nil }
        var skipped: [SkippedEntry] = []
        for _ in 0..<skippedCount {
            guard let path = input.string(), let reason = input.skipReason() else { return nil }
            skipped.append(SkippedEntry(path: path, reason: reason))
        }
        guard let pageCount = input.count() else { return nil }
        let cuts = rendering?.conversion.cutsPages ?? false
        var pages: [Page] = []
        pages.reserveCapacity(pageCount)
        for number in 0..<pageCount {
            guard let name = input.string(), let source = input.string(), let entryIndex = input.varint().flatMap(Int.init(exactly:)),
                  let size = input.signed(), let stored = input.optional({ input -> StoredData? in
                      guard let offset = input.signed(), let crc = input.varint(), crc <= UInt64(UInt32.max) else { return nil }
                      return StoredData(offset: offset, crc32: UInt32(crc))
                  }) else { return nil }
            var page = Page(number: number, name: name, sourcePath: source, entryIndex: entryIndex,
                            size: size, storedData: stored)
            if written >= 3 {
                guard let crc = input.optional({ input -> UInt32? in input.varint().flatMap { UInt32(exactly: $0) } }) else { return nil }
                page.learnedCRC32 = crc
            }
            if written >= 5 {
                // Only a profile that cuts pages lists pieces.
                guard let piece = input.optional({ $0.piece() }), piece == nil || cuts else { return nil }
                page.piece = piece
            } else if written == 4 && cuts {
                guard let source = PackedPageIndex.decode(page.entryIndex) else { return nil }
                page.entryIndex = source.entry
                page.piece = source.piece
            }
            pages.append(page)
        }
        return ComicListing(format: format, pages: pages, comicInfo: comicInfo, skipped: skipped, isSolid: solid == 1,
                            rendering: rendering)
    }
}

/// The device profile's switches in one byte; a byte with an unknown bit is refused.
struct ProfileFlags: OptionSet {
    let rawValue: UInt8
    static let splitSpreads = ProfileFlags(rawValue: 1)
    static let rightToLeft = ProfileFlags(rawValue: 2)
    static let cropMargins = ProfileFlags(rawValue: 4)
    static let strips = ProfileFlags(rawValue: 8)
    static let known: ProfileFlags = [.splitSpreads, .rightToLeft, .cropMargins, .strips]

    init(rawValue: UInt8) { self.rawValue = rawValue }

    init?(exactly byte: UInt8) {
        guard ProfileFlags.known.isSuperset(of: ProfileFlags(rawValue: byte)) else { return nil }
        self.init(rawValue: byte)
    }

    init(_ conversion: PageConversion) {
        var flags: ProfileFlags = []
        if conversion.splitSpreads { flags.insert(.splitSpreads) }
        if conversion.rightToLeft { flags.insert(.rightToLeft) }
        if conversion.cropMargins { flags.insert(.cropMargins) }
        if conversion.strips { flags.insert(.strips) }
        self = flags
    }

    func apply(to conversion: inout PageConversion) {
        conversion.splitSpreads = contains(.splitSpreads)
        conversion.rightToLeft = contains(.rightToLeft)
        conversion.cropMargins = contains(.cropMargins)
        conversion.strips = contains(.strips)
    }
}

/// A listing's pieces. `rendering` is public: the worker protocol sends a request's settings
/// in the same form.
extension BinaryWriter {
    /// Version 1 wrote the height and dpi only, version 3 added the conversion, 4 its flags.
    public mutating func rendering(_ rendering: PageRendering, version: UInt8 = ListingCodec.version) {
        varint(UInt64(max(0, rendering.height)))
        signed(Int64(rendering.dpi ?? -1))
        guard version >= 3 else { return }
        let conversion = rendering.conversion
        byte(conversion.format == .jpeg ? 1 : 0)
        signed(Int64(conversion.fitWidth ?? -1))
        signed(Int64(conversion.fitHeight ?? -1))
        byte(conversion.grayscale ? 1 : 0)
        guard version >= 4 else { return }
        byte(ProfileFlags(conversion).rawValue)
    }

    mutating func entry(_ entry: ArchiveEntry) {
        varint(UInt64(max(0, entry.index)))
        string(entry.path)
        string(entry.kind.rawValue)
        signed(entry.declaredSize ?? -1)
        byte(entry.isEncrypted ? 1 : 0)
    }

    mutating func skipReason(_ reason: SkipReason) {
        switch reason {
        case .notARegularFile(let kind): byte(0); string(kind.rawValue)
        case .hidden: byte(1)
        case .notAnImage: byte(2)
        case .unsafeName(let why): byte(3); string(why)
        case .encrypted: byte(4)
        case .unknownSize: byte(5)
        case .emptyFile: byte(6)
        case .tooLarge(let size): byte(7); signed(size)
        case .damagedHeader(let why): byte(8); string(why)
        }
    }
}

extension BinaryReader {
    /// Numbers that do not fit an Int are refused, not trapped on: the bytes may come from a worker.
    public mutating func rendering(version: UInt8 = ListingCodec.version) -> PageRendering? {
        guard let height = varint().flatMap(Int.init(exactly:)), let dpi = signed() else { return nil }
        var rendering = PageRendering(height: height, dpi: dpi < 0 ? nil : Int(dpi))
        if version >= 3 {
            guard let format = byte(), format <= 1, let width = signed(), let height = signed(),
                  let gray = byte(), gray <= 1 else { return nil }
            rendering.conversion = PageConversion(format: format == 1 ? .jpeg : .original, fitWidth: width < 0 ? nil : Int(width),
                                                  fitHeight: height < 0 ? nil : Int(height), grayscale: gray == 1)
        }
        if version >= 4 {
            guard let flags = byte().flatMap(ProfileFlags.init(exactly:)) else { return nil }
            flags.apply(to: &rendering.conversion)
        }
        return rendering
    }

    mutating func entry() -> ArchiveEntry? {
        guard let index = varint().flatMap(Int.init(exactly:)), let path = string(), let kindName = string(), let kind = EntryKind(rawValue: kindName),
              let size = signed(), let encrypted = byte() else { return nil }
        return ArchiveEntry(index: index, path: path, kind: kind, declaredSize: size < 0 ? nil : size,
                            isEncrypted: encrypted == 1)
    }

    mutating func skipReason() -> SkipReason? {
        switch byte() {
        case 0: return string().flatMap(EntryKind.init(rawValue:)).map { .notARegularFile($0) }
        case 1: return .hidden
        case 2: return .notAnImage
        case 3: return string().map { .unsafeName($0) }
        case 4: return .encrypted
        case 5: return .unknownSize
        case 6: return .emptyFile
        case 7: return signed().map { .tooLarge($0) }
        case 8: return string().map { .damagedHeader($0) }
        default: return nil
        }
    }
}

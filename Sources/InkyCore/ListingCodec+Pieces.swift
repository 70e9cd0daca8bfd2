/// A cut page's piece in the index's binary listings: version 5 stores it beside the page's
/// entry index; version 4 had no room for it and packed it into the entry index itself.
extension BinaryWriter {
    /// A flags byte (bit 0 a strip, bit 1 right to left), the count, the part.
    mutating func piece(_ piece: PagePiece) {
        byte((piece.cut == .strip ? 1 : 0) | (piece.rightToLeft ? 2 : 0))
        varint(UInt64(piece.count))
        varint(UInt64(piece.part))
    }
}

extension BinaryReader {
    /// nil for an unknown flag or a piece no listing makes (`PagePiece.isWellFormed`).
    mutating func piece() -> PagePiece? {
        guard let flags = byte(), flags & ~3 == 0, let count = varint(), count <= UInt64(PagePiece.maxCount),
              let part = varint(), part < count else { return nil }
        let piece = PagePiece(cut: flags & 1 != 0 ? .strip : .spread, part: Int(part), count: Int(count), rightToLeft: flags & 2 != 0)
        return piece.isWellFormed ? piece : nil
    }
}

/// How version 4 listings (written by inkyfs before pieces were typed) hold a cut page: in a
/// listing whose profile cuts pages, every entry index is the member's times 65,536 plus a slot,
/// 0 for a whole page, else bit 15 a strip, bit 14 right to left, bits 7–13 the count, bits 0–6
/// the part. Read, so that those listings need not be made again; written only by the tests, to
/// make such an index.
enum PackedPageIndex {
    static let slots = 1 << 16

    static func packed(_ source: PageSource) -> Int {
        guard let piece = source.piece else { return source.entry &* slots }
        let slot = (piece.cut == .strip ? 1 << 15 : 0) | (piece.rightToLeft ? 1 << 14 : 0) | piece.count << 7 | piece.part
        return source.entry &* slots &+ slot
    }

    /// nil for a number no listing made (negative, a piece past its count, an unknown bit).
    static func decode(_ packed: Int) -> PageSource? {
        guard packed >= 0 else { return nil }
        let entry = packed / slots, slot = packed % slots
        guard slot != 0 else { return PageSource(entry: entry) }
        let piece = PagePiece(cut: slot & 1 << 15 != 0 ? .strip : .spread, part: slot & 0x7F, count: slot >> 7 & 0x7F,
                              rightToLeft: slot & 1 << 14 != 0)
        return piece.isWellFormed ? PageSource(entry: entry, piece: piece) : nil
    }
}

/// Where a listed page's bytes come from: an archive entry, whole or one piece of it (`PagePiece`).
/// The daemon sorts a comic's reads by it (stream order: entry first, then the pieces of that entry
/// in reading order, after the whole entry) and matches a worker's replies to its requests by it.
public struct PageSource: Sendable, Hashable, Comparable, Codable {
    /// The archive member's position in stream order (`Page.entryIndex`).
    public var entry: Int
    public var piece: PagePiece?

    public init(entry: Int, piece: PagePiece? = nil) {
        self.entry = entry
        self.piece = piece
    }

    public static func < (lhs: PageSource, rhs: PageSource) -> Bool {
        guard lhs.entry == rhs.entry else { return lhs.entry < rhs.entry }
        switch (lhs.piece, rhs.piece) {
        case (nil, nil), (_?, nil): return false
        case (nil, _?): return true
        case let (left?, right?):
            // Part first; the rest only makes the order total (one listing never mixes them).
            return (left.part, left.count, left.cut == .strip ? 1 : 0, left.rightToLeft ? 1 : 0)
                < (right.part, right.count, right.cut == .strip ? 1 : 0, right.rightToLeft ? 1 : 0)
        }
    }
}

/// A piece as JSON (a worker's frames, a listing printed): one that is not well formed
/// (`isWellFormed`) is refused, as from a worker that a hostile archive may have subverted.
extension PagePiece: Codable {
    private enum Key: String, CodingKey { case cut, part, count, rightToLeft }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        self.init(cut: try container.decode(Cut.self, forKey: .cut), part: try container.decode(Int.self, forKey: .part),
                  count: try container.decode(Int.self, forKey: .count),
                  rightToLeft: try container.decodeIfPresent(Bool.self, forKey: .rightToLeft) ?? false)
        guard isWellFormed else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "piece \(part) of \(count) is no piece a listing makes"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(cut, forKey: .cut)
        try container.encode(part, forKey: .part)
        try container.encode(count, forKey: .count)
        if rightToLeft { try container.encode(true, forKey: .rightToLeft) }
    }
}

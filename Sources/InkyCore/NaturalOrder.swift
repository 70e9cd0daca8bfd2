import Foundation

/// Reading order of page paths: natural, locale-independent, component by component.
///
/// "Chapter 2/01.jpg" < "Chapter 10/01.jpg", "p2" < "p10", case-insensitive, NFC and NFD
/// spellings equal, and a final tie-break on the raw UTF-8 bytes so the order is total and stable.
/// Linux Foundation has no `localizedStandardCompare`, and a locale-dependent order would
/// change page order between machines, so this is written out.
public enum NaturalOrder {
    public static func areInIncreasingOrder(_ lhs: String, _ rhs: String) -> Bool {
        compare(lhs, rhs) == .orderedAscending
    }

    public static func compare(_ lhs: String, _ rhs: String) -> ComparisonResult {
        let keys = sortKeys(for: [lhs, rhs])
        return compare(keys[0], keys[1])
    }

    /// Keys for names that are sorted together. Whether "0304" is a spread (pages 3 and 4) or
    /// page 304 depends on the list: it is a spread when the list also numbers pages with half
    /// as many digits. Deciding that per pair of names made the order intransitive
    /// ("0304" < "04" < "118" < "0304"), so the decision is made once, for the whole list.
    public static func sortKeys(for paths: [String]) -> [SortKey] {
        let keys = paths.map(SortKey.init(unannotated:))
        let widths = Set(keys.flatMap(\.numberWidths))
        return keys.map { $0.readingSpreads(amongWidths: widths) }
    }

    /// A path, pre-split for comparison; build them with `sortKeys(for:)` when sorting many.
    public struct SortKey: Sendable {
        var components: [[Token]]
        let raw: [UInt8]

        /// A key for a name compared on its own: spreads only among its own numbers.
        public init(_ path: String) {
            self = NaturalOrder.sortKeys(for: [path])[0]
        }

        fileprivate init(unannotated path: String) {
            let parts = EntryPath.components(of: path)
            components = parts.enumerated().map { offset, part in
                Token.tokenize(part, isLast: offset == parts.count - 1)
            }
            raw = Array(path.utf8)
        }

        fileprivate var numberWidths: [Int] {
            components.flatMap { $0 }.compactMap { token in
                if case .number(_, let width, _) = token { width } else { nil }
            }
        }

        /// Marks numbers twice as wide as a width the list uses, with consecutive halves, as
        /// spreads: they then sort as their first page, just after it.
        fileprivate func readingSpreads(amongWidths widths: Set<Int>) -> SortKey {
            var key = self
            key.components = components.map { tokens in
                tokens.map { token in
                    guard case .number(let digits, let width, _) = token,
                          width >= 4, width % 2 == 0, widths.contains(width / 2),
                          let first = NaturalOrder.spreadFirstPage(digits, width: width) else { return token }
                    return .number(digits: first, width: width, isSpread: true)
                }
            }
            return key
        }
    }

    public static func compare(_ lhs: SortKey, _ rhs: SortKey) -> ComparisonResult {
        for (left, right) in zip(lhs.components, rhs.components) {
            let order = compareComponent(left, right)
            if order != .orderedSame { return order }
        }
        if lhs.components.count != rhs.components.count {
            return lhs.components.count < rhs.components.count ? .orderedAscending : .orderedDescending
        }
        return lhs.raw.lexicographicallyPrecedes(rhs.raw) ? .orderedAscending
            : (lhs.raw == rhs.raw ? .orderedSame : .orderedDescending)
    }

    enum Token: Sendable, Equatable {
        /// A digit run: its digits without leading zeros and its written width; a spread
        /// carries its first page's digits.
        case number(digits: [UInt8], width: Int, isSpread: Bool)
        /// Text, folded: NFC, lowercased, runs of spaces/underscores as one space.
        case text(String)
        /// Marks the start of the file extension, so "p1.jpg" < "p1-2.jpg" ('.' sorts after '-').
        case extensionMark

        static func tokenize(_ component: String, isLast: Bool) -> [Token] {
            var stem = component
            var ext: String?
            if isLast, let dot = component.lastIndex(of: "."), dot != component.startIndex {
                stem = String(component[..<dot])
                ext = String(component[component.index(after: dot)...])
            }
            var tokens = split(stem)
            if let ext {
                tokens.append(.extensionMark)
                tokens += split(ext)
            }
            return tokens
        }

        private static func split(_ text: String) -> [Token] {
            let folded = text.precomposedStringWithCanonicalMapping.lowercased()
            var tokens: [Token] = []
            var digits: [UInt8] = []
            var letters = ""
            func flushDigits() {
                guard !digits.isEmpty else { return }
                let significant = Array(digits.drop { $0 == 0x30 })
                tokens.append(.number(digits: significant, width: digits.count, isSpread: false))
                digits.removeAll()
            }
            func flushLetters() {
                guard !letters.isEmpty else { return }
                tokens.append(.text(letters))
                letters = ""
            }
            for character in folded {
                if let ascii = character.asciiValue, ascii >= 0x30, ascii <= 0x39 {
                    flushLetters()
                    digits.append(ascii)
                } else {
                    flushDigits()
                    let isGap = character == "_" || character.isWhitespace
                    if isGap {
                        if !letters.hasSuffix(" ") { letters.append(" ") }
                    } else {
                        letters.append(character)
                    }
                }
            }
            flushDigits()
            flushLetters()
            return tokens
        }
    }

    private static func compareComponent(_ lhs: [Token], _ rhs: [Token]) -> ComparisonResult {
        for (left, right) in zip(lhs, rhs) {
            let order = compareToken(left, right)
            if order != .orderedSame { return order }
        }
        if lhs.count == rhs.count { return .orderedSame }
        return lhs.count < rhs.count ? .orderedAscending : .orderedDescending
    }

    private static func compareToken(_ lhs: Token, _ rhs: Token) -> ComparisonResult {
        switch (lhs, rhs) {
        case let (.number(a, widthA, spreadA), .number(b, widthB, spreadB)):
            return compareNumbers(a, widthA, spreadA, b, widthB, spreadB)
        case let (.text(a), .text(b)):
            return a == b ? .orderedSame : (a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
                ? .orderedAscending : .orderedDescending)
        case (.extensionMark, .extensionMark):
            return .orderedSame
        // A shorter name ends (extension) before a longer one continues: "p1.jpg" < "p1a.jpg".
        case (.extensionMark, _): return .orderedAscending
        case (_, .extensionMark): return .orderedDescending
        // A number sorts where its first digit would: after punctuation ("!cover" first, as
        // comic taggers expect), before letters.
        case (.number, .text(let text)): return text.unicodeScalars.first! < "0" ? .orderedDescending : .orderedAscending
        case (.text(let text), .number): return text.unicodeScalars.first! < "0" ? .orderedAscending : .orderedDescending
        }
    }

    /// Numbers compare by value; a spread sorts as its first page, just after it.
    private static func compareNumbers(_ a: [UInt8], _ widthA: Int, _ spreadA: Bool,
                                       _ b: [UInt8], _ widthB: Int, _ spreadB: Bool) -> ComparisonResult {
        let order = compareValues(a, b)
        if order != .orderedSame { return order }
        if spreadA != spreadB { return spreadA ? .orderedDescending : .orderedAscending }
        // Equal values: fewer leading zeros first ("1" < "01"), deterministic either way.
        return widthA == widthB ? .orderedSame : (widthA < widthB ? .orderedAscending : .orderedDescending)
    }

    private static func compareValues(_ a: [UInt8], _ b: [UInt8]) -> ComparisonResult {
        if a.count != b.count { return a.count < b.count ? .orderedAscending : .orderedDescending }
        if a == b { return .orderedSame }
        return a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending
    }

    /// "0304" (width 4) → "3" when its halves are consecutive page numbers; otherwise nil.
    fileprivate static func spreadFirstPage(_ significant: [UInt8], width: Int) -> [UInt8]? {
        let padded = [UInt8](repeating: 0x30, count: width - significant.count) + significant
        let half = width / 2
        guard let first = Int(String(decoding: padded[..<half], as: UTF8.self)),
              let second = Int(String(decoding: padded[half...], as: UTF8.self)),
              second == first + 1 else { return nil }
        return first == 0 ? [] : Array(String(first).utf8)
    }
}

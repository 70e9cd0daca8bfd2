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
        compare(SortKey(lhs), SortKey(rhs))
    }

    /// A path, pre-split for comparison; build one per entry when sorting many.
    public struct SortKey: Sendable {
        let components: [[Token]]
        let raw: [UInt8]

        public init(_ path: String) {
            let parts = EntryPath.components(of: path)
            components = parts.enumerated().map { offset, part in
                Token.tokenize(part, isLast: offset == parts.count - 1)
            }
            raw = Array(path.utf8)
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
        /// A digit run: its digits without leading zeros, and its written width.
        case number(digits: [UInt8], width: Int)
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
                tokens.append(.number(digits: significant, width: digits.count))
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
        case let (.number(a, widthA), .number(b, widthB)):
            return compareNumbers(a, widthA, b, widthB)
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

    /// Numbers compare by value; a two-page spread written as both page numbers ("0304" among
    /// two-digit pages) sorts as its first page, just after it, instead of as page 304.
    private static func compareNumbers(_ a: [UInt8], _ widthA: Int, _ b: [UInt8], _ widthB: Int) -> ComparisonResult {
        let spreadA = widthA >= 4 && widthA == 2 * widthB ? spreadFirstPage(a, width: widthA) : nil
        let spreadB = widthB >= 4 && widthB == 2 * widthA ? spreadFirstPage(b, width: widthB) : nil
        if let first = spreadA {
            let order = compareValues(first, b)
            return order == .orderedSame ? .orderedDescending : order
        }
        if let first = spreadB {
            let order = compareValues(a, first)
            return order == .orderedSame ? .orderedAscending : order
        }
        let order = compareValues(a, b)
        if order != .orderedSame { return order }
        // Equal values: fewer leading zeros first ("1" < "01"), deterministic either way.
        return widthA == widthB ? .orderedSame : (widthA < widthB ? .orderedAscending : .orderedDescending)
    }

    private static func compareValues(_ a: [UInt8], _ b: [UInt8]) -> ComparisonResult {
        if a.count != b.count { return a.count < b.count ? .orderedAscending : .orderedDescending }
        if a == b { return .orderedSame }
        return a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending
    }

    /// "0304" (width 4) → "3" when its halves are consecutive page numbers; otherwise nil.
    private static func spreadFirstPage(_ significant: [UInt8], width: Int) -> [UInt8]? {
        let padded = [UInt8](repeating: 0x30, count: width - significant.count) + significant
        let half = width / 2
        guard let first = Int(String(decoding: padded[..<half], as: UTF8.self)),
              let second = Int(String(decoding: padded[half...], as: UTF8.self)),
              second == first + 1 else { return nil }
        return first == 0 ? [] : Array(String(first).utf8)
    }
}

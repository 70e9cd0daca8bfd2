import Foundation

/// Reading order of page paths: natural, locale-independent, component by component.
///
/// "Chapter 2/01.jpg" < "Chapter 10/01.jpg", "p2" < "p10", names compared after NFKC and full
/// case folding (so "ﬁle", "FILE" and "file" are one word and "１２" is the number 12), and a
/// final tie-break on the raw UTF-8 bytes so the order is total and stable. Linux Foundation has
/// no `localizedStandardCompare`, and a locale-dependent order would change page order between
/// machines, so this is written out. docs/reading-order.md states the rule and its reasons.
public enum NaturalOrder {
    public static func areInIncreasingOrder(_ lhs: String, _ rhs: String) -> Bool {
        compare(lhs, rhs) == .orderedAscending
    }

    public static func compare(_ lhs: String, _ rhs: String) -> ComparisonResult {
        let keys = sortKeys(for: [lhs, rhs])
        return compare(keys[0], keys[1])
    }

    /// Keys for names that are sorted together. Whether "0304" is a spread (pages 3 and 4) or
    /// page 304 depends on the names around it (`ReadingSpreads`). Deciding that per pair of
    /// names made the order intransitive ("0304" < "04" < "118" < "0304"), so the decision is
    /// made once, for the whole list.
    public static func sortKeys(for paths: [String]) -> [SortKey] {
        ReadingSpreads.mark(paths.map(SortKey.init(unannotated:)))
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
        /// Text, folded (`fold`), runs of spaces/underscores as one space.
        case text(String)
        /// Marks the start of the file extension, so "p1.jpg" < "p1-2.jpg" ('.' sorts after '-').
        case extensionMark

        static func tokenize(_ component: String, isLast: Bool) -> [Token] {
            var stem = component
            var ext: String?
            if isLast, let dot = lastDot(in: component), dot != component.startIndex {
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

        /// The last '.': found on bytes in an ASCII name (a '.' byte there is a '.' character).
        private static func lastDot(in component: String) -> String.Index? {
            component.isASCII ? component.utf8.lastIndex(of: UInt8(ascii: "."))
                : component.lastIndex(of: ".")
        }

        /// NFKC, full case folding, NFKC again (folding can undo composition: "İ" folds to
        /// "i" + U+0307): Unicode's NFKC_Casefold but for dropping default-ignorables. ASCII
        /// (nearly every page name) is its own NFKC and folds to its lowercase: Foundation's
        /// normalizations were a third of listing a small comic in a worker.
        static func fold(_ text: String) -> String {
            if text.isASCII { return text.lowercased() }
            return text.precomposedStringWithCompatibilityMapping.folding(options: [.caseInsensitive], locale: nil)
                .precomposedStringWithCompatibilityMapping
        }

        private static func split(_ text: String) -> [Token] {
            let folded = fold(text)
            if folded.isASCII { return splitASCII(folded) }
            var words = Words<String> { $0 }
            for character in folded {
                if let ascii = character.asciiValue, ascii >= 0x30, ascii <= 0x39 {
                    words.addDigit(ascii)
                } else if character == "_" || character.isWhitespace {
                    words.endDigits()
                    if !words.letters.hasSuffix(" ") { words.letters.append(" ") }
                } else {
                    words.endDigits()
                    words.letters.append(character)
                }
            }
            return words.finish()
        }

        /// `split` on bytes, for ASCII, where every byte is a character ("\r\n", the one pair
        /// that is a single character, is a gap either way): page names are nearly all ASCII,
        /// and building words character by character was a tenth of listing a small comic.
        private static func splitASCII(_ folded: String) -> [Token] {
            var words = Words<[UInt8]> { String(decoding: $0, as: UTF8.self) }
            for byte in folded.utf8 {
                if byte >= 0x30 && byte <= 0x39 {
                    words.addDigit(byte)
                } else if byte == UInt8(ascii: "_") || byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
                    // Character.isWhitespace in ASCII: tab, line feed, vertical tab, form feed, return, space.
                    words.endDigits()
                    if words.letters.last != 0x20 { words.letters.append(0x20) }
                } else {
                    words.endDigits()
                    words.letters.append(byte)
                }
            }
            return words.finish()
        }
    }

    /// The tokens of one name as `split` reads it: digit runs become numbers, the rest words.
    private struct Words<Letters: RangeReplaceableCollection> {
        var tokens: [Token] = []
        var digits: [UInt8] = []
        var letters = Letters()
        let word: (Letters) -> String

        init(word: @escaping (Letters) -> String) { self.word = word }

        mutating func addDigit(_ digit: UInt8) {
            endLetters()
            digits.append(digit)
        }

        mutating func endDigits() {
            guard !digits.isEmpty else { return }
            tokens.append(.number(digits: Array(digits.drop { $0 == 0x30 }), width: digits.count, isSpread: false))
            digits.removeAll()
        }

        mutating func endLetters() {
            guard !letters.isEmpty else { return }
            tokens.append(.text(word(letters)))
            letters.removeAll()
        }

        mutating func finish() -> [Token] {
            endDigits()
            endLetters()
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
}

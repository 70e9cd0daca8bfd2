/// Which numbers in a list of page names are two-page spreads written as one number ("0405"
/// for pages 4 and 5), decided from the names around them (docs/reading-order.md).
///
/// A spread named with a separator ("p04-05", "p04_05") needs nothing here: it already sorts
/// after "p04" and before "p05". A joined one is only recognised when the list proves it,
/// because a plain numeric sequence must read in numeric order whatever its padding: `1011.png`
/// among `1.png` … `5000.png` is page 1011, not "10–11". A number of 2w digits whose halves
/// are consecutive (a, a+1) is a spread when, among the names of its slot (same folder, same
/// words around the numbers, same numbers before it):
/// - every number is written w digits wide, or 2w wide with consecutive halves, and at least
///   one w-wide number has a leading zero: the list is zero-padded to w, so a 2w-wide name
///   cannot be an ordinary page;
/// - neither a nor a+1 is a page of its own.
/// In a numeric sequence with no gap (any start, any padding) this never holds: beside a
/// w-wide number, a 2w-wide one (at least 10^w + 2, or "00…01" = 1, the smallest anyway) means
/// the sequence also holds 10^w, which is wider than w and whose halves (1, 0) are not
/// consecutive.
enum ReadingSpreads {
    static func mark(_ keys: [NaturalOrder.SortKey]) -> [NaturalOrder.SortKey] {
        // Only a spread-shaped number is ever marked, and most lists have none ("001.jpg"):
        // describing every name's slot was a quarter of a worker's listing CPU for nothing.
        guard keys.contains(where: hasSpreadShapedNumber) else { return keys }
        let slottedKeys = keys.map(numbers(of:))
        var slots: [Slot: SlotNumbers] = [:]
        for slotted in slottedKeys {
            for (slot, number) in slotted { slots[slot, default: SlotNumbers()].add(number) }
        }
        return zip(keys, slottedKeys).map { key, slotted in
            guard var last = key.components.last else { return key }
            var marked = key
            var numberIndex = 0
            for (tokenIndex, token) in last.enumerated() {
                guard case .number = token else { continue }
                defer { numberIndex += 1 }
                let (slot, number) = slotted[numberIndex]
                if let first = number.spreadFirstPage, slots[slot]?.provesSpread(number) == true {
                    last[tokenIndex] = .number(digits: first, width: number.width, isSpread: true)
                }
            }
            marked.components[marked.components.count - 1] = last
            return marked
        }
    }

    /// True when a number of the key's last component could be a spread (`spreadFirstPage`).
    static func hasSpreadShapedNumber(_ key: NaturalOrder.SortKey) -> Bool {
        key.components.last?.contains { token in
            guard case .number(let digits, let width, _) = token else { return false }
            return Number(digits: digits, width: width).spreadFirstPage != nil
        } ?? false
    }

    /// Where a number stands: its name's folder, the shape of the name (its words, numbers
    /// as a placeholder, extension left out) and the values of the numbers before it.
    struct Slot: Hashable {
        let context: String
        let position: Int
    }

    struct Number {
        let digits: [UInt8]
        let width: Int

        /// The halves of a 2w-digit number (w ≥ 2) when they are consecutive: "0405" → "4".
        var spreadFirstPage: [UInt8]? {
            guard width >= 4, width % 2 == 0, width <= 36 else { return nil }
            let padded = [UInt8](repeating: 0x30, count: width - digits.count) + digits
            let half = width / 2
            guard let first = Int(String(decoding: padded[..<half], as: UTF8.self)),
                  let second = Int(String(decoding: padded[half...], as: UTF8.self)),
                  second == first + 1 else { return nil }
            return first == 0 ? [] : Array(String(first).utf8)
        }

        var hasLeadingZero: Bool { digits.count < width }
    }

    /// The numbers of a slot: the values written at each width, the widths written with a
    /// leading zero, and those with a number that is not spread-shaped.
    struct SlotNumbers {
        var values: [Int: Set<[UInt8]>] = [:]
        var paddedWidths: Set<Int> = []
        var plainWidths: Set<Int> = []

        mutating func add(_ number: Number) {
            values[number.width, default: []].insert(number.digits)
            if number.hasLeadingZero { paddedWidths.insert(number.width) }
            if number.spreadFirstPage == nil { plainWidths.insert(number.width) }
        }

        func provesSpread(_ number: Number) -> Bool {
            guard let first = number.spreadFirstPage else { return false }
            let half = number.width / 2
            guard paddedWidths.contains(half), !plainWidths.contains(number.width),
                  Set(values.keys).isSubset(of: [half, number.width]) else { return false }
            let pages = values[half] ?? []
            let second = String(Int(String(decoding: first, as: UTF8.self)).map { $0 + 1 } ?? 1)
            return !pages.contains(first) && !pages.contains(Array(second.utf8))
        }
    }

    /// Each number of the file name (the last component, before the extension) with its slot.
    static func numbers(of key: NaturalOrder.SortKey) -> [(Slot, Number)] {
        guard let last = key.components.last else { return [] }
        let folder = key.components.dropLast().map(describe).joined(separator: "/")
        let stem = last.prefix { $0 != .extensionMark }
        let shape = stem.map { token -> String in
            if case .number = token { return "#" }
            return describe([token])
        }.joined(separator: "\u{1}")
        var result: [(Slot, Number)] = []
        var before: [String] = []
        for token in last {
            guard case .number(let digits, let width, _) = token else { continue }
            let context = [folder, shape, before.joined(separator: ",")].joined(separator: "\u{0}")
            result.append((Slot(context: context, position: before.count), Number(digits: digits, width: width)))
            before.append(String(decoding: digits, as: UTF8.self))
        }
        return result
    }

    private static func describe(_ tokens: [NaturalOrder.Token]) -> String {
        tokens.map { token in
            switch token {
            case .number(let digits, _, _): "#" + String(decoding: digits, as: UTF8.self)
            case .text(let text): "t" + text
            case .extensionMark: "."
            }
        }.joined(separator: "\u{1}")
    }
}

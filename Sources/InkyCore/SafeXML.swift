/// A small XML reader for the metadata files comics and reading lists carry (ComicInfo.xml,
/// CoMet.xml, ComicRack `.cbl`): elements, attributes, text, CDATA, comments, processing
/// instructions, the five predefined entities and character references. Their bytes come from
/// archives anyone can make, so it refuses any DOCTYPE (no DTD means no entity to expand: an XML
/// bomb is refused, never expanded), bounds size, depth and element count, and answers nil for
/// anything not well-formed; the caller then falls back to what else it knows.
public enum SafeXML {
    public struct Element: Sendable, Equatable {
        public var name: String
        public var attributes: [String: String]
        public var children: [Element]
        /// The element's own text (CDATA included), children's text left out.
        public var text: String

        /// The first child of that name, compared without case (taggers disagree on case).
        public func child(_ name: String) -> Element? {
            children.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        }

        /// An attribute, its name compared without case.
        public func attribute(_ name: String) -> String? {
            attributes.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    public static let maxBytes = 4 << 20
    public static let maxDepth = 32
    public static let maxElements = 200_000

    public static func parse(_ bytes: [UInt8]) -> Element? {
        guard bytes.count <= maxBytes else { return nil }
        var parser = Parser(bytes: bytes)
        return parser.document()
    }

    private struct Parser {
        let bytes: [UInt8]
        var at = 0
        var elements = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { at = 3 }
        }

        mutating func document() -> Element? {
            guard skipMisc() else { return nil }
            guard peek("<"), let root = element(depth: 0) else { return nil }
            guard skipMisc(), at == bytes.count else { return nil }
            return root
        }

        /// Whitespace, comments and processing instructions; false on a DOCTYPE or other `<!`.
        mutating func skipMisc() -> Bool {
            while true {
                skipSpace()
                if peek("<?") {
                    guard skip(past: "?>") else { return false }
                } else if peek("<!--") {
                    guard skip(past: "-->") else { return false }
                } else if peek("<!") {
                    return false
                } else {
                    return true
                }
            }
        }

        mutating func element(depth: Int) -> Element? {
            elements += 1
            guard depth < maxDepth, elements <= maxElements, consume("<"), let name = name() else { return nil }
            var element = Element(name: name, attributes: [:], children: [], text: "")
            while true {
                let hadSpace = skipSpace()
                if consume("/>") { return element }
                if consume(">") { break }
                guard hadSpace, let attribute = self.name() else { return nil }
                skipSpace()
                guard consume("=") else { return nil }
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") || bytes[at] == UInt8(ascii: "'") else { return nil }
                let quote = bytes[at]
                at += 1
                let start = at
                while at < bytes.count, bytes[at] != quote {
                    if bytes[at] == UInt8(ascii: "<") { return nil }
                    at += 1
                }
                guard at < bytes.count, let value = decoded(start..<at), element.attributes[attribute] == nil else { return nil }
                at += 1
                element.attributes[attribute] = value
            }
            var text: [String] = []
            while at < bytes.count {
                if consume("</") {
                    guard self.name() == name else { return nil }
                    skipSpace()
                    guard consume(">") else { return nil }
                    element.text = text.joined()
                    return element
                } else if peek("<!--") {
                    guard skip(past: "-->") else { return nil }
                } else if consume("<![CDATA[") {
                    let start = at
                    guard skip(past: "]]>") else { return nil }
                    text.append(String(decoding: bytes[start..<(at - 3)], as: UTF8.self))
                } else if peek("<?") {
                    guard skip(past: "?>") else { return nil }
                } else if peek("<!") {
                    return nil
                } else if peek("<") {
                    guard let child = self.element(depth: depth + 1) else { return nil }
                    element.children.append(child)
                } else {
                    let start = at
                    while at < bytes.count, bytes[at] != UInt8(ascii: "<") { at += 1 }
                    guard let piece = decoded(start..<at) else { return nil }
                    text.append(piece)
                }
            }
            return nil
        }

        /// A tag or attribute name: up to whitespace, `=`, `/`, `>`; no markup characters in it.
        mutating func name() -> String? {
            let start = at
            while at < bytes.count {
                let byte = bytes[at]
                if byte <= 0x20 || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">") { break }
                if byte == UInt8(ascii: "<") || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") { return nil }
                at += 1
            }
            guard at > start, at - start <= 256 else { return nil }
            return String(decoding: bytes[start..<at], as: UTF8.self)
        }

        /// Text with its references replaced; nil for an unknown entity or a bad reference.
        func decoded(_ range: Range<Int>) -> String? {
            guard bytes[range].contains(UInt8(ascii: "&")) else { return String(decoding: bytes[range], as: UTF8.self) }
            var out = ""
            var index = range.lowerBound
            var plainStart = index
            while index < range.upperBound {
                guard bytes[index] == UInt8(ascii: "&") else { index += 1; continue }
                out += String(decoding: bytes[plainStart..<index], as: UTF8.self)
                guard let end = bytes[index..<range.upperBound].firstIndex(of: UInt8(ascii: ";")), end - index <= 12 else { return nil }
                let reference = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                guard let character = Self.resolve(reference) else { return nil }
                out.append(character)
                index = end + 1
                plainStart = index
            }
            out += String(decoding: bytes[plainStart..<range.upperBound], as: UTF8.self)
            return out
        }

        static func resolve(_ reference: String) -> Character? {
            switch reference {
            case "lt": return "<"
            case "gt": return ">"
            case "amp": return "&"
            case "quot": return "\""
            case "apos": return "'"
            default:
                guard reference.hasPrefix("#") else { return nil }
                let digits = reference.dropFirst()
                let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
                guard let value, value != 0, let scalar = Unicode.Scalar(value) else { return nil }
                return Character(scalar)
            }
        }

        @discardableResult
        mutating func skipSpace() -> Bool {
            let start = at
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0A || bytes[at] == 0x0D { at += 1 }
            return at > start
        }

        func peek(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard at + count <= bytes.count else { return false }
            return literal.withUTF8Buffer { buffer in
                for offset in 0..<count where bytes[at + offset] != buffer[offset] { return false }
                return true
            }
        }

        mutating func consume(_ literal: StaticString) -> Bool {
            guard peek(literal) else { return false }
            at += literal.utf8CodeUnitCount
            return true
        }

        /// Moves past the next `terminator`; false when there is none.
        mutating func skip(past terminator: StaticString) -> Bool {
            while at < bytes.count {
                if consume(terminator) { return true }
                at += 1
            }
            return false
        }
    }
}

import Foundation

/// An issue number as comics print them ("1", "1.5", "½", "-1", "12AU", "Annual 1", "∞"), ordered
/// the way a reader expects: numbered issues by value (1, 1.5, 2, 10), a suffix after its number
/// (1, 1a, 2), and everything that does not start with a number after all numbered ones, in
/// natural order (Annual 1, Annual 2, Annual 10).
public struct IssueNumber: Comparable, Sendable {
    public let text: String
    /// The leading number (fractions like ½ count), nil when the text does not start with one.
    public let value: Double?
    /// What follows the number ("a" of "1a").
    public let suffix: String

    public init(_ text: String) {
        self.text = text
        let trimmed = text.trimmingSpaces
        var scalars = Substring(trimmed).unicodeScalars[...]
        var negative = false
        if scalars.first == "-" || scalars.first == "−" {
            negative = true
            scalars = scalars.dropFirst()
        }
        var digits = ""
        while let scalar = scalars.first, ("0"..."9").contains(scalar) || (scalar == "." && !digits.contains(".")) {
            // A dot not followed by a digit ("1.MU") belongs to the suffix.
            if scalar == ".", scalars.dropFirst().first.map({ !("0"..."9").contains($0) }) ?? true { break }
            digits.unicodeScalars.append(scalar)
            scalars = scalars.dropFirst()
        }
        var value = digits.isEmpty ? nil : Double(digits)
        if let first = scalars.first, let fraction = Self.fractions[first] {
            value = (value ?? 0) + fraction
            scalars = scalars.dropFirst()
        }
        self.value = value.map { negative ? -$0 : $0 }
        self.suffix = value == nil ? trimmed : String(String.UnicodeScalarView(scalars)).trimmingSpaces
    }

    private static let fractions: [Unicode.Scalar: Double] = ["½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1.0 / 3, "⅔": 2.0 / 3]

    public static func < (lhs: IssueNumber, rhs: IssueNumber) -> Bool {
        switch (lhs.value, rhs.value) {
        case let (left?, right?) where left != right: return left < right
        case (.some, nil): return true
        case (nil, .some): return false
        default:
            let order = NaturalOrder.compare(lhs.suffix, rhs.suffix)
            return order == .orderedSame ? lhs.text < rhs.text : order == .orderedAscending
        }
    }

    public static func == (lhs: IssueNumber, rhs: IssueNumber) -> Bool { lhs.text == rhs.text }

    /// The number without the padding file names carry ("012" → "12", "001.5" → "1.5", "000" → "0").
    public static func normalized(_ text: String) -> String {
        var scalars = Substring(text).unicodeScalars[...]
        var sign = ""
        if scalars.first == "-" {
            sign = "-"
            scalars = scalars.dropFirst()
        }
        var zeros = 0
        while scalars.first == "0" {
            scalars = scalars.dropFirst()
            zeros += 1
        }
        guard zeros > 0 else { return text }
        // Keep one zero before a dot, a fraction, a suffix or the end ("0.5", "0", "0a").
        if scalars.first.map({ !("1"..."9").contains($0) }) ?? true { return sign + "0" + String(String.UnicodeScalarView(scalars)) }
        return sign + String(String.UnicodeScalarView(scalars))
    }
}

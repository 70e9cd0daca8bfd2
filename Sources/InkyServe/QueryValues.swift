import Foundation

/// A request's query string, decoded: `+` is a space, `%XX` a byte, the result UTF-8 (a value
/// that is not is dropped). The first value of a name counts.
struct QueryValues {
    private var values: [String: String] = [:]

    init(_ query: String?) {
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), values[name] == nil else { continue }
            values[name] = parts.count > 1 ? Self.decode(parts[1]) : ""
        }
    }

    subscript(_ name: String) -> String? { values[name] }

    /// A whole number from `min`, nil for anything else (absent, signed, huge, junk).
    func integer(_ name: String, min: Int = 0) -> Int? {
        guard let text = values[name], text.count <= 9, text.allSatisfy(\.isASCII), let value = Int(text), value >= min else { return nil }
        return value
    }

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}

import Foundation

/// Series, volume, number and year read from a comic's file name the way comic taggers read
/// `Series Name v2 #012 (2019).cbz`: bracketed groups are notes (a four-digit year among them),
/// `v2`/`Vol. 2`/`Volume 2` is the volume, `#012` or else the last number after the series' first
/// word is the issue, and what comes before is the series.
public enum FileNameMetadata {
    static let extensions: Set<String> = ["cbz", "cbr", "cb7", "cbt", "cba", "pdf", "zip", "rar", "7z", "tar"]

    public static func parse(_ fileName: String) -> ComicMetadata {
        var name = fileName
        if let dot = name.lastIndex(of: "."), extensions.contains(name[name.index(after: dot)...].lowercased()) {
            name = String(name[..<dot])
        }
        let (text, year) = removingGroups(name)
        var tokens = text.split(whereSeparator: { $0 == "_" || $0.isWhitespace }).map(String.init)
        var metadata = ComicMetadata(source: .fileName, year: year)
        var end = tokens.count
        // The issue: a #-token anywhere, else the last number that is not the first word.
        if let hash = tokens.firstIndex(where: { $0.hasPrefix("#") && $0.count > 1 }) {
            metadata.number = IssueNumber.normalized(String(tokens[hash].dropFirst()))
            end = hash
        } else if let last = tokens.indices.last, last > 0, isIssueNumber(tokens[last]) {
            metadata.number = IssueNumber.normalized(tokens[last])
            end = last
        }
        tokens = Array(tokens[..<end])
        if let (index, length, volume) = volumeToken(in: tokens) {
            metadata.volume = volume
            tokens.removeSubrange(index..<(index + length))
            if index < tokens.count, index > 0 { tokens.removeSubrange(index...) }
        }
        while let last = tokens.last, last == "-" || last == "–" { tokens.removeLast() }
        metadata.series = tokens.isEmpty ? nil : tokens.joined(separator: " ")
        if metadata.series == nil { metadata.series = text.trimmingSpaces.isEmpty ? name : text.trimmingSpaces }
        return metadata.sanitized()
    }

    /// The name without `(…)`, `[…]` and `{…}` groups, and the year one of them held.
    static func removingGroups(_ name: String) -> (String, Int?) {
        var out = ""
        var group = ""
        var closing: Character?
        var year: Int?
        for character in name {
            if let close = closing {
                if character == close {
                    if year == nil, group.count == 4, let value = Int(group), (1900...2100).contains(value) { year = value }
                    closing = nil
                    out.append(" ")
                } else {
                    group.append(character)
                }
                continue
            }
            switch character {
            case "(": closing = ")"; group = ""
            case "[": closing = "]"; group = ""
            case "{": closing = "}"; group = ""
            default: out.append(character)
            }
        }
        return (out, year)
    }

    static func isIssueNumber(_ token: String) -> Bool {
        let number = IssueNumber(token)
        guard number.value != nil else { return false }
        // "1", "012", "1.5", "½", "-1", "12a"; not a year-like word glued to letters ("2000AD").
        return number.suffix.count <= 2 && token.first.map { $0.isNumber || $0 == "-" || $0 == "½" } == true
    }

    /// Where the volume is: `v2`, `vol2`, `Vol. 2`, `Volume 2` (index, tokens used, value).
    static func volumeToken(in tokens: [String]) -> (Int, Int, Int)? {
        for (index, token) in tokens.enumerated() where index > 0 {
            let lower = token.lowercased()
            for prefix in ["volume", "vol.", "vol", "v"] where lower.hasPrefix(prefix) {
                let rest = lower.dropFirst(prefix.count)
                if !rest.isEmpty, let value = Int(rest) { return (index, 1, value) }
                if rest.isEmpty, prefix != "v", index + 1 < tokens.count, let value = Int(tokens[index + 1]) { return (index, 2, value) }
            }
        }
        return nil
    }
}

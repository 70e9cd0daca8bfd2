import Foundation

/// Series, volume, number and year read from a comic's file name the way comic taggers read
/// `Series Name v2 #012 (2019).cbz`: bracketed groups are notes (a four-digit year among them),
/// `v2`/`Vol. 2`/`Volume 2` is the volume, `#012` or else the last number after the series' first
/// word is the issue, and what comes before is the series.
///
/// A name that says no series of its own (`001.cbz`, `#12.cbz`, `Issue 12.cbz`, `Chapter 3.cbz`)
/// takes it from the folder that holds it, as libraries laid out `Batman (2016)/Issue 001.cbz` mean:
/// without that, every such comic of a library was one series, "Issue" (50,000 links in one
/// folder of `By Series/` at 100,000 comics), or each number its own.
public enum FileNameMetadata {
    static let extensions: Set<String> = ["cbz", "cbr", "cb7", "cbt", "cba", "pdf", "zip", "rar", "7z", "tar"]

    /// Words that name what an issue is, not which series (`Issue 12`, `Ch. 3`), lowercased.
    static let issueWords: Set<String> = ["issue", "issues", "chapter", "chap", "chap.", "ch", "ch.", "episode", "ep", "ep.",
                                          "part", "pt", "pt.", "no", "no.", "number", "nr", "nr.", "book", "comic", "-", "–"]

    /// `folder`: the name of the folder holding the comic (nil at the top of a library or vault),
    /// whose series, volume and year fill a name with no series of its own.
    public static func parse(_ fileName: String, folder: String?) -> ComicMetadata {
        let (own, words) = read(fileName)
        guard let folder else { return own.sanitized() }
        var number = own.number
        // A lone number is the series of a name read alone; with a folder, it is the number.
        if number == nil, words.count == 1, isIssueNumber(words[0]) { number = IssueNumber.normalized(words[0]) }
        else if !words.allSatisfy({ issueWords.contains($0.lowercased()) }) { return own.sanitized() }
        let named = folderMetadata(folder)
        guard let series = named.series else { return own.sanitized() }
        var metadata = own
        metadata.series = series
        metadata.number = number
        metadata.volume = own.volume ?? named.volume
        metadata.year = own.year ?? named.year
        return metadata.sanitized()
    }

    /// A folder's name as a series: groups are notes (a year among them), `v2`/`Vol. 2` the
    /// volume, and every other word the series, numbers included (`Series 0002`, `2000 AD`).
    static func folderMetadata(_ folder: String) -> ComicMetadata {
        let (text, year) = removingGroups(folder)
        var tokens = words(text)
        var metadata = ComicMetadata(source: .fileName, year: year)
        if let (index, length, volume) = volumeToken(in: tokens) {
            metadata.volume = volume
            tokens.removeSubrange(index..<(index + length))
        }
        metadata.series = series(&tokens)
        return metadata.sanitized()
    }

    static func withoutExtension(_ fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: "."), extensions.contains(fileName[fileName.index(after: dot)...].lowercased()) else {
            return fileName
        }
        return String(fileName[..<dot])
    }

    public static func parse(_ fileName: String) -> ComicMetadata { read(fileName).metadata.sanitized() }

    /// The name's metadata, unsanitized, and the words its series was made of (empty when it
    /// has none of its own).
    static func read(_ fileName: String) -> (metadata: ComicMetadata, seriesWords: [String]) {
        let name = withoutExtension(fileName)
        let (text, year) = removingGroups(name)
        var tokens = words(text)
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
        metadata.series = series(&tokens)
        if metadata.series == nil { metadata.series = text.trimmingSpaces.isEmpty ? name : text.trimmingSpaces }
        return (metadata, tokens)
    }

    /// The words of a name: split at whitespace and underscores.
    static func words(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "_" || $0.isWhitespace }).map(String.init)
    }

    /// `tokens` without their trailing dashes, joined: the series they name, nil when none is left.
    static func series(_ tokens: inout [String]) -> String? {
        while let last = tokens.last, last == "-" || last == "–" { tokens.removeLast() }
        return tokens.isEmpty ? nil : tokens.joined(separator: " ")
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

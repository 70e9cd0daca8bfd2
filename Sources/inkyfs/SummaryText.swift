import InkyCore

/// The human-readable lines of `pages` and `scan`.
enum SummaryText {
    static func pages(_ summary: ComicSummary) -> String {
        if let error = summary.error { return "error: \(error.message)\n" }
        var text = ""
        let pages = summary.pages ?? []
        let width = pages.map(\.name.count).max() ?? 0
        for page in pages {
            text += page.name.padding(toLength: width, withPad: " ", startingAt: 0)
                + "  \((page.isSizeKnown ? String(page.size) : "rendered").leftPadded(to: 10))  \(page.sourcePath)\n"
        }
        if let info = summary.comicInfo { text += "metadata: \(info)\n" }
        for skipped in summary.skipped ?? [] {
            text += "skipped: \(skipped.path): \(skipped.reason.text)\n"
        }
        return text
    }

    static func scanLine(_ summary: ComicSummary, library: String) -> String {
        let name = summary.path.hasPrefix(library + "/") ? String(summary.path.dropFirst(library.count + 1)) : summary.path
        let format = summary.format?.displayName ?? "?"
        if let error = summary.error {
            return "ERROR  \(format.padding(toLength: 11, withPad: " ", startingAt: 0)) \(name): \(Self.reason(error))"
        }
        let count = summary.pages?.count ?? 0
        return "ok     \(format.padding(toLength: 11, withPad: " ", startingAt: 0)) \(name): \(count) page\(count == 1 ? "" : "s")"
    }

    static func scanTotals(_ summaries: [ComicSummary]) -> String {
        let failed = summaries.filter { $0.error != nil }.count
        let pages = summaries.reduce(0) { $0 + ($1.pages?.count ?? 0) }
        return "\(summaries.count) comics: \(summaries.count - failed) readable (\(pages) pages), \(failed) with errors"
    }

    /// The message without its leading path, which the scan line already shows.
    private static func reason(_ error: ComicSummary.ErrorSummary) -> String {
        guard let colon = error.message.range(of: ": ") else { return error.message }
        return String(error.message[colon.upperBound...])
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

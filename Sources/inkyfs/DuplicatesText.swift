import InkyLibrary

/// `inkyfs duplicates` without --json: the groups, the comic to keep first, and the moves.
enum DuplicatesText {
    static func groups(_ groups: [DuplicateFinder.Group], library: String) -> String {
        var lines: [String] = []
        for group in groups {
            lines.append(title(of: group.kind))
            for (index, comic) in group.comics.enumerated() {
                let name = comic.hasPrefix(library + "/") ? String(comic.dropFirst(library.count + 1)) : comic
                lines.append("  \(index == 0 ? "keep" : "    ") \(name)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func title(of kind: DuplicateFinder.Kind) -> String {
        switch kind {
        case .identical: "identical bytes:"
        case .samePages: "the same pages in another file:"
        case .copy: "a copy by name:"
        case .possible: "possibly the same issue (same series, volume and number):"
        }
    }

    static func moves(_ outcomes: [MoveOutcome], dryRun: Bool, groups: Int) -> String {
        guard !outcomes.isEmpty else { return "nothing to move" }
        var lines = outcomes.map { outcome in
            if let error = outcome.error { return "not moved: \(outcome.from): \(error)" }
            return "\(dryRun ? "would move" : "moved") \(outcome.from) -> \(outcome.to)"
        }
        let moved = outcomes.filter(\.moved).count, failed = outcomes.filter { $0.error != nil }.count
        lines.append(dryRun ? "dry run: \(outcomes.count) comics would move (add --yes to move them)"
                            : "moved \(moved) of \(outcomes.count) comics\(failed > 0 ? ", \(failed) failed" : "")")
        return lines.joined(separator: "\n")
    }
}

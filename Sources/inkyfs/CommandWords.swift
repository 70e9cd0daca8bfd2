import Foundation

/// The first word of a command line: a command, or (mount being the default command, as
/// mount.fuse3 runs `inkyfs SOURCE MOUNTPOINT -o …`) the library's path. A word that is neither
/// a command nor anything on disk, and has no '/', is a mistyped command, not a missing library.
enum CommandWords {
    /// The message for `word` if it is an unknown command, nil when it is a command, an option or a path.
    /// `hidden`: commands that exist but are not offered (the worker's).
    static func unknown(_ word: String, commands: [String], hidden: [String] = []) -> String? {
        guard !word.hasPrefix("-"), !word.contains("/"), !commands.contains(word), !hidden.contains(word),
              !FileManager.default.fileExists(atPath: word) else { return nil }
        let closest = commands.map { ($0, distance(word, $0)) }.min { $0.1 < $1.1 }
        let guess = aliases[word.lowercased()] ?? closest.flatMap { $0.1 <= max(2, $0.0.count / 3) ? $0.0 : nil }
        let suggestion = guess.map { " Did you mean '\($0)'?" } ?? ""
        return "'\(word)' is not an inkyfs command, nor a library folder here.\(suggestion)\n"
            + "Commands: \(commands.joined(separator: ", ")). See: inkyfs --help"
    }

    /// Words other tools use for these commands: `umount` is as near to `mount` as to `unmount`.
    static let aliases = ["umount": "unmount", "stop": "unmount", "eject": "unmount", "ls": "scan", "list": "scan",
                          "check": "doctor", "info": "status", "ps": "status"]

    /// Levenshtein distance (insertions, deletions, substitutions).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0 ... b.count)
        for i in 1 ... max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1 ... max(b.count, 1) where !b.isEmpty {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }
}

import Foundation
import InkyCore

/// The titles of a view folder's links, where links that would read alike say which file each
/// is: the corpus's Captain Science #1 comes as four files tagged alike, and `001 Captain
/// Science #1 (1950)`, `002 Captain Science #1 (1950)`... told a reader nothing. Those get the
/// file's name in brackets, `Captain Science #1 (1950) [Captain Science #001-cix]`: the name
/// without its extension, with it where that alone tells them apart, else the path in the
/// library. Titles no other link shares stay as they are.
enum DistinctTitles {
    /// Each record's title; `room`: the bytes a title and what follows it (`comicSuffix`) may take.
    static func make(_ records: [ComicRecord], room: Int) -> [String] {
        var titles = records.map(\.title)
        for indices in Dictionary(grouping: records.indices, by: { titles[$0] }).values where indices.count > 1 {
            let notes = Self.notes(indices.map { records[$0] })
            for (index, note) in zip(indices, notes) {
                let title = titles[index]
                // " [" and "]" around the note; a title already near NAME_MAX stays as it is.
                let left = room - title.utf8.count - records[index].comicSuffix.utf8.count - 3
                guard left >= 8, let shown = SafeName.make(note, maxBytes: left) else { continue }
                titles[index] = title + " [" + shown + "]"
            }
        }
        return titles
    }

    /// What tells these files apart: their names without extension, else with it, else their paths.
    private static func notes(_ records: [ComicRecord]) -> [String] {
        let stems = records.map(\.fileStem)
        if Set(stems).count == stems.count { return stems }
        let names = records.map { ($0.comic as NSString).lastPathComponent }
        if Set(names).count == names.count { return names }
        return records.map(\.comic)
    }
}

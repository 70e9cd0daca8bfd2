import Foundation
import InkyCore

/// Which folder of `By Series/` each series and volume of a library goes to. Tags of one series
/// disagree in small ways (the corpus's Captain Science #1 comes as volume 1950 in ComicInfo.xml,
/// volume 1 in CoMet.xml and no volume in its file name), and a folder per raw (series, volume)
/// split one series into three. The rule:
/// - One series is every comic whose series reads alike once case, accents, spaces and
///   punctuation are set aside (`Spider-Man`, `Spider Man`, `SPIDER-MAN`), as Kavita's normalized
///   names do. Its folder takes the spelling most of its comics use.
/// - A volume from 1800 to 2199 is a year, the run's start as ComicVine and Mylar name it:
///   `Batman (2011)`. Any other is a volume number, shown `Saga v1` as Mylar's `$VolumeN` and
///   scanned files' names (`Saga v01 #054`) write it: `Saga (1)` read as a file manager's copy.
/// - A volume splits a series only when its comics name two different ones of a kind (two years,
///   or two volume numbers): then each volume is a folder, and comics that name none are in the
///   folder of the bare name. Otherwise the series is one folder, named after the year its comics
///   name, else their volume number, else neither.
/// - The publisher never splits a series (the same Captain Science #1 says `Bell Features` in
///   CoMet.xml and `Youthful Adventure Stories` in ComicInfo.xml): `By Publisher/` links the one
///   folder from each publisher named.
struct SeriesFolders: Sendable {
    private struct Key: Hashable {
        var series: String
        var volume: Int?
    }
    private var names: [Key: String] = [:]

    /// `groups`: each raw (series, volume) of the comics, with how many comics name it.
    init(_ groups: [(series: String, volume: Int?, count: Int)]) {
        var bySeries: [String: [(series: String, volume: Int?, count: Int, shown: String)]] = [:]
        for group in groups {
            guard let shown = SafeName.make(group.series) else { continue }
            bySeries[Self.normalized(shown), default: []].append((group.series, group.volume, group.count, shown))
        }
        for members in bySeries.values {
            var spellings: [String: Int] = [:]
            for member in members { spellings[member.shown, default: 0] += member.count }
            let base = spellings.min { ($1.value, $0.key) < ($0.value, $1.key) }!.key
            let volumes = Set(members.compactMap(\.volume))
            let years = volumes.filter(Self.isYear)
            let split = years.count > 1 || volumes.count - years.count > 1
            let shared = years.first ?? volumes.first
            for member in members {
                names[Key(series: member.series, volume: member.volume)] = base + Self.suffix(split ? member.volume : shared)
            }
        }
    }

    /// Every record's series and volume, counted: the folders of a set of comics held in memory.
    init(records: [ComicRecord]) {
        var counts: [Key: Int] = [:]
        for record in records {
            guard let series = record.metadata.series else { continue }
            counts[Key(series: series, volume: record.metadata.volume), default: 0] += 1
        }
        self.init(counts.map { (series: $0.key.series, volume: $0.key.volume, count: $0.value) })
    }

    /// The folder of comics tagged with this series and volume; nil without a showable series.
    func name(series: String?, volume: Int?) -> String? {
        series.flatMap { names[Key(series: $0, volume: volume)] }
    }

    /// What tells two spellings of one series apart once case, accents, spaces and punctuation
    /// are set aside; the name itself when nothing else is left (a series called `!!!`).
    static func normalized(_ series: String) -> String {
        let folded = series.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        let kept = folded.filter { $0.isLetter || $0.isNumber }
        return kept.isEmpty ? folded : kept
    }

    static func isYear(_ volume: Int) -> Bool { (1800...2199).contains(volume) }

    /// ` (1950)` for a year, ` v1` for a volume number, nothing without a volume.
    static func suffix(_ volume: Int?) -> String {
        guard let volume else { return "" }
        return isYear(volume) ? " (\(volume))" : " v\(volume)"
    }
}

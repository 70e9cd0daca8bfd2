import Foundation
import InkyCore

/// What the metadata views ask the index on demand, so that a view holds in memory only its
/// folders' names (they grow with the series, arcs and publishers, not the comics) and the
/// folders in use. Each query keeps to the comics under one library folder (`under`, absolute):
/// a path range the path index answers. All read through the views' own connection
/// (`withReader`), so a library lookup never waits behind them.
extension StateDatabase {
    /// Each distinct (series, volume) of a comic with a series, with its publisher when
    /// `withPublisher` (then only comics with one), and how many comics it has: what By Series/'s
    /// and By Publisher/'s folders are made of (several may make one folder: `SeriesFolders`).
    /// `digest` tells whether the group's comics moved (`MetadataDigest`).
    public func metadataSeriesGroups(under folder: String, withPublisher: Bool = false) -> [MetadataSeriesGroup] {
        let sql = withPublisher
            ? "SELECT publisher, series, volume, \(MetadataDigest.sql), count(*) FROM comic_metadata WHERE publisher IS NOT NULL AND series IS NOT NULL AND path >= ? AND path < ? GROUP BY publisher, series, volume"
            : "SELECT NULL, series, volume, \(MetadataDigest.sql), count(*) FROM comic_metadata WHERE series IS NOT NULL AND path >= ? AND path < ? GROUP BY series, volume"
        return (try? withReader { database throws(SQLiteError) -> [MetadataSeriesGroup] in
            let query = try database.prepare(sql)
            try query.bind(Self.range(under: folder))
            var groups: [MetadataSeriesGroup] = []
            while try query.step() {
                guard let series = query.text(at: 1) else { continue }
                groups.append(MetadataSeriesGroup(series: series, volume: query.isNull(at: 2) ? nil : Int(query.int64(at: 2)),
                                                  publisher: query.text(at: 0), digest: query.int64(at: 3), count: Int(query.int64(at: 4))))
            }
            return groups
        }) ?? []
    }

    /// Each distinct story arc of a comic under `folder`, with its digest: Story Arcs/'s folders.
    public func metadataArcNames(under folder: String) -> [(arc: String, digest: Int64)] {
        (try? withReader { database throws(SQLiteError) -> [(arc: String, digest: Int64)] in
            let query = try database.prepare("""
                SELECT arc, \(MetadataDigest.sql) FROM comic_arcs JOIN comic_metadata ON comic_metadata.id = comic_arcs.comic
                WHERE path >= ? AND path < ? GROUP BY arc
                """)
            try query.bind(Self.range(under: folder))
            var arcs: [(arc: String, digest: Int64)] = []
            while try query.step() { if let name = query.text(at: 0) { arcs.append((name, query.int64(at: 1))) } }
            return arcs
        }) ?? []
    }

    /// The comics of these (series, volume) pairs, arcs included.
    public func indexedMetadata(series keys: [(series: String, volume: Int?)], under folder: String) -> [IndexedMetadata] {
        keys.flatMap { key in
            indexedMetadata(where: "series = ? AND volume IS ? AND path >= ? AND path < ?",
                            [key.series as (any SQLiteBindable)?, key.volume.map(Int64.init)] + Self.range(under: folder))
        }
    }

    /// The comics in these story arcs (each once), arcs included.
    public func indexedMetadata(arcs: [String], under folder: String) -> [IndexedMetadata] {
        let marks = Array(repeating: "?", count: arcs.count).joined(separator: ", ")
        return indexedMetadata(where: "id IN (SELECT comic FROM comic_arcs WHERE arc IN (\(marks))) AND path >= ? AND path < ?",
                               arcs.map { $0 as (any SQLiteBindable)? } + Self.range(under: folder))
    }

    /// One comic's row by its id, if it is under `folder`.
    public func indexedMetadata(id: Int64, under folder: String) -> IndexedMetadata? {
        indexedMetadata(where: "id = ? AND path >= ? AND path < ?", [id as (any SQLiteBindable)?] + Self.range(under: folder)).first
    }

    /// The `count` most recently modified comics; of those with the same mtime as the last of
    /// them, the first in natural order of their paths (as `Recently Added/` orders ties). Ties
    /// are read as paths first: a library copied at one mtime makes every comic a tie, and
    /// reading 100,000 whole rows for 100 links took 120 MiB.
    public func newestMetadata(_ count: Int, under folder: String) -> [IndexedMetadata] {
        let range = Self.range(under: folder)
        guard count > 0, let threshold = (try? withReader({ database throws(SQLiteError) -> Int64? in
            let query = try database.prepare("""
                SELECT mtime_ns FROM comic_metadata WHERE path >= ? AND path < ? ORDER BY mtime_ns DESC LIMIT 1 OFFSET ?
                """)
            try query.bind(range + [Int64(count - 1) as (any SQLiteBindable)?])
            return try query.step() ? query.int64(at: 0) : nil
        })) ?? nil else {
            return indexedMetadata(where: "path >= ? AND path < ?", range)
        }
        let newer = indexedMetadata(where: "mtime_ns > ? AND path >= ? AND path < ?", [threshold as (any SQLiteBindable)?] + range)
        // The first `wanted` tied paths in natural order, kept as they stream by (no other is held).
        let wanted = max(0, count - newer.count)
        let first = (try? withReader { database throws(SQLiteError) -> [String] in
            let query = try database.prepare("SELECT path FROM comic_metadata WHERE mtime_ns = ? AND path >= ? AND path < ?")
            try query.bind([threshold as (any SQLiteBindable)?] + range)
            // Each path's key made once: two per comparison made the first Recently Added/ of a
            // library copied at one mtime take 0.9 s at 100,000 comics.
            var best: [(path: String, key: NaturalOrder.SortKey)] = []
            while try query.step() {
                guard let path = query.text(at: 0) else { continue }
                let key = NaturalOrder.SortKey(path)
                if best.count == wanted, let last = best.last, NaturalOrder.compare(key, last.key) != .orderedAscending { continue }
                var low = 0, high = best.count
                while low < high {
                    let middle = (low + high) / 2
                    if NaturalOrder.compare(best[middle].key, key) == .orderedAscending { low = middle + 1 } else { high = middle }
                }
                best.insert((path, key), at: low)
                if best.count > wanted { best.removeLast() }
            }
            return best.map(\.path)
        }).map { $0.map { $0 as (any SQLiteBindable)? } } ?? []
        guard !first.isEmpty else { return newer }
        let marks = Array(repeating: "?", count: first.count).joined(separator: ", ")
        return newer + indexedMetadata(where: "path IN (\(marks))", Array(first))
    }

    /// Comics under `folder` whose series, title or path holds every word of `text` (case
    /// aside, ASCII's: SQL's LIKE), at most `limit`: a catalog's search. LIKE's wildcards in the
    /// words are matched as themselves.
    public func searchMetadata(_ text: String, under folder: String, limit: Int) -> [IndexedMetadata] {
        let words = text.split(whereSeparator: \.isWhitespace).prefix(8).map { word in
            "%" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_") + "%"
        }
        guard !words.isEmpty else { return [] }
        // The path inside the library only (SQLite's substr counts code points, from 1).
        let relative = "substr(path, \(folder.unicodeScalars.count + 2))"
        let match = "(coalesce(series, '') || ' ' || coalesce(title, '') || ' ' || \(relative)) LIKE ? ESCAPE '\\'"
        let condition = Array(repeating: match, count: words.count).joined(separator: " AND ")
        return Array(indexedMetadata(where: "path >= ? AND path < ? AND \(condition)",
                                     Self.range(under: folder) + words.map { $0 as (any SQLiteBindable)? }).prefix(limit))
    }

    /// The paths under `folder`: from `folder/` up to (not including) `folder0` ('0' follows '/').
    static func range(under folder: String) -> [(any SQLiteBindable)?] { [folder + "/", folder + "0"] }
}

/// One (series, volume) of the index, or (publisher, series, volume).
public struct MetadataSeriesGroup: Sendable {
    public var series: String
    public var volume: Int?
    public var publisher: String?
    public var digest: Int64
    /// The comics in it.
    public var count: Int
}

/// A number that changes when a group of comics' rows change: one comes or goes (its row id is
/// new for every path), or its file is rewritten (size, mtime: its metadata is read again).
/// A view keeps it for each folder whose links it no longer holds, to tell the kernel to forget
/// that folder only when it moved. Sums stay far below 2^63: each term under 2^31, 100,000s of rows.
enum MetadataDigest {
    static let sql = "count(*) * 1000000007 + sum((comic_metadata.id * 1000003 + comic_metadata.mtime_ns % 1000000007 + comic_metadata.size % 1000003) % 2147483647)"
}

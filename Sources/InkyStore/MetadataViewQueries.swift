import Foundation
import InkyCore

/// What the metadata views ask the index on demand, so that a view holds in memory only its
/// folders' names (they grow with the series, arcs and publishers, not the comics) and the
/// folders in use. Each query keeps to the comics under one library folder (`under`, absolute):
/// a path range the path index answers. All read through the views' own connection
/// (`withReader`), so a library lookup never waits behind them.
extension StateDatabase {
    /// Each distinct (series, volume) of a comic with a series, with its publisher when
    /// `withPublisher` (then only comics with one): By Series/'s and By Publisher/'s folders.
    public func metadataSeriesGroups(under folder: String, withPublisher: Bool = false) -> [(series: String, volume: Int?, publisher: String?)] {
        let sql = withPublisher
            ? "SELECT publisher, series, volume FROM comic_metadata WHERE publisher IS NOT NULL AND series IS NOT NULL AND path >= ? AND path < ? GROUP BY publisher, series, volume"
            : "SELECT NULL, series, volume FROM comic_metadata WHERE series IS NOT NULL AND path >= ? AND path < ? GROUP BY series, volume"
        return (try? withReader { database throws(SQLiteError) -> [(series: String, volume: Int?, publisher: String?)] in
            let query = try database.prepare(sql)
            try query.bind(Self.range(under: folder))
            var groups: [(series: String, volume: Int?, publisher: String?)] = []
            while try query.step() {
                guard let series = query.text(at: 1) else { continue }
                groups.append((series, query.isNull(at: 2) ? nil : Int(query.int64(at: 2)), query.text(at: 0)))
            }
            return groups
        }) ?? []
    }

    /// Each distinct story arc of a comic under `folder`: Story Arcs/'s folders.
    public func metadataArcNames(under folder: String) -> [String] {
        (try? withReader { database throws(SQLiteError) -> [String] in
            let query = try database.prepare("""
                SELECT arc FROM comic_arcs WHERE comic IN (SELECT id FROM comic_metadata WHERE path >= ? AND path < ?) GROUP BY arc
                """)
            try query.bind(Self.range(under: folder))
            var names: [String] = []
            while try query.step() { if let name = query.text(at: 0) { names.append(name) } }
            return names
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

    /// The `count` most recently modified comics, and every other of the same mtime as the last
    /// of them (the caller orders ties by path).
    public func newestMetadata(_ count: Int, under folder: String) -> [IndexedMetadata] {
        let range = Self.range(under: folder)
        let threshold = (try? withReader { database throws(SQLiteError) -> Int64? in
            let query = try database.prepare("""
                SELECT mtime_ns FROM comic_metadata WHERE path >= ? AND path < ? ORDER BY mtime_ns DESC LIMIT 1 OFFSET ?
                """)
            try query.bind(range + [Int64(max(0, count - 1)) as (any SQLiteBindable)?])
            return try query.step() ? query.int64(at: 0) : nil
        }) ?? nil
        return indexedMetadata(where: "mtime_ns >= ? AND path >= ? AND path < ?", [(threshold ?? Int64.min) as (any SQLiteBindable)?] + range)
    }

    /// The paths under `folder`: from `folder/` up to (not including) `folder0` ('0' follows '/').
    static func range(under folder: String) -> [(any SQLiteBindable)?] { [folder + "/", folder + "0"] }
}

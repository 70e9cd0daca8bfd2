import Foundation
import InkyCore

/// One comic's metadata as the index keeps it, with the row id views number their entries by.
public struct IndexedMetadata: Sendable, Equatable {
    public var id: Int64
    public var file: LibraryFile
    public var modifiedNanoseconds: Int64
    public var metadata: ComicMetadata
}

/// Each library comic's metadata, stored with its listing (same path, same identity, same
/// transaction) and read by the views. A vault comic never gets here: the store is keyed by
/// `LibraryFile`, and a vault comic's listing (whose tags `Vault/`'s own views read in memory) is
/// never stored.
extension StateDatabase {
    /// Replaces the metadata of each listed comic; a comic that failed or shows no page loses its
    /// row (it shows in no view), a listing without metadata (one read back from the index)
    /// leaves it alone.
    func storeMetadata(of listings: [(file: LibraryFile, identity: FileIdentity, result: Result<ComicListing, ComicError>)],
                       in database: Database) throws(SQLiteError) {
        // An upsert keeps the row id, so a re-tagged comic keeps its inode numbers in the views.
        let upsert = try database.prepare("""
            INSERT INTO comic_metadata (path, size, mtime_ns, inode, source, series, number, volume, title, publisher,
                                        year, month, page_count, language, manga)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, inode = excluded.inode,
                source = excluded.source, series = excluded.series, number = excluded.number, volume = excluded.volume,
                title = excluded.title, publisher = excluded.publisher, year = excluded.year, month = excluded.month,
                page_count = excluded.page_count, language = excluded.language, manga = excluded.manga
            RETURNING id
            """)
        let clearArcs = try database.prepare("DELETE FROM comic_arcs WHERE comic = ?")
        let addArc = try database.prepare("INSERT INTO comic_arcs (comic, position, arc, arc_number) VALUES (?, ?, ?, ?)")
        for (file, identity, result) in listings {
            switch result {
            case .failure(.parserFailed), .failure(.io): continue
            case .failure: try removeMetadata(of: file, in: database)
            case .success(let listing) where listing.pages.isEmpty: try removeMetadata(of: file, in: database)
            case .success(let listing):
                guard let metadata = listing.metadata else { continue }
                upsert.reset()
                try upsert.bind([file.path, identity.size, identity.modifiedNanoseconds, Int64(bitPattern: identity.inode),
                                 metadata.source.rawValue, metadata.series, metadata.number, metadata.volume.map(Int64.init),
                                 metadata.title, metadata.publisher, metadata.year.map(Int64.init), metadata.month.map(Int64.init),
                                 metadata.pageCount.map(Int64.init), metadata.language, metadata.manga])
                guard try upsert.step() else { continue }
                let id = upsert.int64(at: 0)
                upsert.reset()
                clearArcs.reset()
                try clearArcs.bind(id, at: 1)
                _ = try clearArcs.step()
                for (position, arc) in metadata.arcs.enumerated() {
                    addArc.reset()
                    try addArc.bind([id, Int64(position), arc.name, arc.number])
                    _ = try addArc.step()
                }
                metadataChanges &+= 1
            }
        }
    }

    func removeMetadata(of file: LibraryFile, in database: Database) throws(SQLiteError) {
        for sql in ["DELETE FROM comic_arcs WHERE comic IN (SELECT id FROM comic_metadata WHERE path = ?)",
                    "DELETE FROM comic_metadata WHERE path = ?"] {
            let statement = try database.prepare(sql)
            try statement.bind(file.path, at: 1)
            _ = try statement.step()
        }
        if database.changes > 0 { metadataChanges &+= 1 }
    }

    /// The metadata stored for `file`, whatever its identity (views show the last known).
    public func indexedMetadata(_ file: LibraryFile) -> IndexedMetadata? {
        indexedMetadata(where: "path = ?", [file.path]).first
    }

    /// Every comic's metadata, arcs included (a view builds its folders from it).
    public func allIndexedMetadata() -> [IndexedMetadata] { indexedMetadata(where: "1", []) }

    /// The rows matching `condition` (its `?` bound to `values`), arcs included.
    func indexedMetadata(where condition: String, _ values: [(any SQLiteBindable)?]) -> [IndexedMetadata] {
        (try? withReader { database throws(SQLiteError) -> [IndexedMetadata] in
            let query = try database.prepare("""
                SELECT id, path, mtime_ns, source, series, number, volume, title, publisher, year, month, page_count,
                       language, manga FROM comic_metadata WHERE \(condition) ORDER BY id
                """)
            try query.bind(values)
            var rows: [IndexedMetadata] = []
            var byID: [Int64: Int] = [:]
            func integer(_ column: Int) -> Int? { query.isNull(at: column) ? nil : Int(query.int64(at: column)) }
            while try query.step() {
                guard let path = query.text(at: 1) else { continue }
                let metadata = ComicMetadata(
                    source: ComicMetadata.Source(rawValue: query.text(at: 3) ?? "") ?? .fileName,
                    series: query.text(at: 4), number: query.text(at: 5), volume: integer(6), title: query.text(at: 7),
                    publisher: query.text(at: 8), year: integer(9), month: integer(10), pageCount: integer(11),
                    language: query.text(at: 12), manga: query.text(at: 13))
                byID[query.int64(at: 0)] = rows.count
                rows.append(IndexedMetadata(id: query.int64(at: 0), file: LibraryFile(path: path),
                                            modifiedNanoseconds: query.int64(at: 2), metadata: metadata))
            }
            guard !rows.isEmpty else { return rows }
            let arcs = try database.prepare("""
                SELECT comic, arc, arc_number FROM comic_arcs WHERE comic IN (SELECT id FROM comic_metadata WHERE \(condition))
                ORDER BY comic, position
                """)
            try arcs.bind(values)
            while try arcs.step() {
                guard let index = byID[arcs.int64(at: 0)], let name = arcs.text(at: 1) else { continue }
                rows[index].metadata.arcs.append(ComicMetadata.Arc(name: name, number: arcs.text(at: 2)))
            }
            return rows
        }) ?? []
    }
}

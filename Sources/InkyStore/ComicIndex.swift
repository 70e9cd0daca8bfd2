import Foundation
import InkyCore

/// Each comic's listing (or error) under the key of its archive's path, size, mtime (ns) and
/// inode: a remount reads listings from here instead of opening archives, and a changed key
/// means that comic alone is listed again.
extension StateDatabase {
    /// The stored result for `file` if it was made for exactly `identity`.
    public func indexedListing(_ file: LibraryFile, identity: FileIdentity) -> Result<ComicListing, ComicError>? {
        (try? withIndexStatement(Self.listingQuery) { query throws(SQLiteError) in try Self.listing(query, file, identity) }) ?? nil
    }

    /// Runs `body` with `sql` compiled on the index lookups' own read connection.
    private func withIndexStatement<T>(_ sql: String, _ body: (Statement) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        if case .done(let result) = try indexReader.withStatement(sql, body) { return result }
        return try withStatement(sql, body)
    }

    /// The stored results for many comics (a folder's, listed ahead) in one read transaction:
    /// a transaction per comic took and released the WAL's read lock (two fcntl calls) each time.
    public func indexedListings(_ comics: [(file: LibraryFile, identity: FileIdentity)]) -> [Result<ComicListing, ComicError>?] {
        eachInOneRead(Self.listingQuery, comics, Self.listing, otherwise: nil)
    }

    /// Whether the index holds a result for each comic, made for exactly its identity, without
    /// decoding any, in one read transaction: the library walk passes over such comics.
    public func areIndexed(_ comics: [(file: LibraryFile, identity: FileIdentity)]) -> [Bool] {
        eachInOneRead(Self.indexedQuery, comics, Self.isIndexed, otherwise: false)
    }

    private func eachInOneRead<T>(_ sql: String, _ comics: [(file: LibraryFile, identity: FileIdentity)],
                                  _ answer: (Statement, LibraryFile, FileIdentity) throws(SQLiteError) -> T, otherwise: T) -> [T] {
        eachInOneRead(sql, comics, { query, comic throws(SQLiteError) in try answer(query, comic.file, comic.identity) }, otherwise: otherwise)
    }

    /// `answer` for each item with `sql` compiled once, in one transaction on the index
    /// lookups' connection (the main one if there is no file to open twice); `otherwise` for an
    /// item whose query failed, or for all if the database did.
    func eachInOneRead<Item, T>(_ sql: String, _ items: [Item], _ answer: (Statement, Item) throws(SQLiteError) -> T, otherwise: T) -> [T] {
        let transaction = { (database: Database) throws(SQLiteError) -> [T] in
            try database.execute("BEGIN")
            defer { try? database.execute("COMMIT") }
            let query = try database.prepare(sql)
            return items.map { item in
                defer { query.reset() }
                return (try? answer(query, item)) ?? otherwise
            }
        }
        let found: [T]? = switch try? indexReader.with(transaction) {
        case .done(let found)?: found
        case .unavailable?: try? withDatabase(transaction)
        case nil: nil
        }
        return found ?? Array(repeating: otherwise, count: items.count)
    }

    private static let listingQuery = "SELECT size, mtime_ns, inode, listing_bin, error, listing FROM comic_index WHERE path = ?"

    private static func listing(_ query: Statement, _ file: LibraryFile, _ identity: FileIdentity) throws(SQLiteError) -> Result<ComicListing, ComicError>? {
        try query.bind(file.path, at: 1)
        guard try query.step(), query.int64(at: 0) == identity.size, query.int64(at: 1) == identity.modifiedNanoseconds,
              UInt64(bitPattern: query.int64(at: 2)) == identity.inode else { return nil }
        if let binary = query.blob(at: 3), let value = ListingCodec.decode(binary) { return .success(value) }
        let decoder = JSONDecoder()
        if let error = query.text(at: 4), let value = try? decoder.decode(ComicError.self, from: Data(error.utf8)) {
            return .failure(value)
        }
        // A row from before v6: JSON, rewritten binary when this comic is next stored.
        if let listing = query.text(at: 5), let value = try? decoder.decode(ComicListing.self, from: Data(listing.utf8)) {
            return .success(value)
        }
        return nil
    }

    private static let indexedQuery = "SELECT 1 FROM comic_index WHERE path = ? AND size = ? AND mtime_ns = ? AND inode = ?"

    private static func isIndexed(_ query: Statement, _ file: LibraryFile, _ identity: FileIdentity) throws(SQLiteError) -> Bool {
        try query.bind([file.path, identity.size, identity.modifiedNanoseconds, Int64(bitPattern: identity.inode)])
        return try query.step()
    }

    /// Stores what listing `path` gave for `identity`. Parser crashes, timeouts and I/O errors
    /// are not stored: they may be a passing fault of this run (or of the disk), and the next
    /// mount deserves a try.
    public func storeListing(_ file: LibraryFile, identity: FileIdentity, _ result: Result<ComicListing, ComicError>) {
        storeListings([(file, identity, result)])
    }

    /// Stores many listings in one transaction (`inkyfs index` writes them in batches: a
    /// commit per comic was a tenth of its time).
    public func storeListings(_ listings: [(file: LibraryFile, identity: FileIdentity, result: Result<ComicListing, ComicError>)]) {
        let rows = listings.compactMap { file, identity, result -> [(any SQLiteBindable)?]? in
            var listing: [UInt8]?, error: String?
            switch result {
            case .failure(.parserFailed), .failure(.io): return nil
            case .success(let value): listing = ListingCodec.encode(value)
            case .failure(let value): error = (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) }
            }
            return [file.path, identity.size, identity.modifiedNanoseconds, Int64(bitPattern: identity.inode),
                    listing, error, Date().timeIntervalSince1970]
        }
        guard !rows.isEmpty else { return }
        _ = try? withDatabase { database throws(SQLiteError) in
            try database.immediateTransaction { () throws(SQLiteError) in
                let statement = try database.prepare("""
                    INSERT OR REPLACE INTO comic_index (path, size, mtime_ns, inode, listing_bin, error, indexed_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """)
                for row in rows {
                    statement.reset()
                    try statement.bind(row)
                    try statement.step()
                }
                try storeMetadata(of: listings, in: database)
            }
        }
    }

    public func removeFromIndex(_ file: LibraryFile) {
        _ = try? withDatabase { database throws(SQLiteError) in
            try database.immediateTransaction { () throws(SQLiteError) in
                for sql in ["DELETE FROM comic_index WHERE path = ?", "DELETE FROM page_hashes WHERE path = ?",
                            "DELETE FROM document_digests WHERE path = ?"] {
                    let statement = try database.prepare(sql)
                    try statement.bind(file.path, at: 1)
                    try statement.step()
                }
                try removeMetadata(of: file, in: database)
            }
        }
    }

    public var indexedComicCount: Int {
        (try? withDatabase { database throws(SQLiteError) in
            let query = try database.prepare("SELECT count(*) FROM comic_index")
            _ = try query.step()
            return Int(query.int64(at: 0))
        }) ?? 0
    }
}

import Foundation
import InkyCore

/// What a person corrects by hand (`inkyfs progress forget/set`): the reading state of one comic.
extension StateDatabase {
    /// Forgets where the reader is in `path` (its bookmarks stay); whether there was anything.
    @discardableResult
    public func forgetProgress(_ path: String) throws(SQLiteError) -> Bool {
        try changesRows("DELETE FROM reading WHERE path = ?", [path])
    }

    /// Runs one change; whether it changed any row.
    func changesRows(_ sql: String, _ values: [(any SQLiteBindable)?]) throws(SQLiteError) -> Bool {
        try withDatabase { database throws(SQLiteError) in
            let statement = try database.prepare(sql)
            try statement.bind(values)
            try statement.step()
            return database.changes > 0
        }
    }

    /// Puts the reader at `page` (0-based) of `path`, every page before it seen and none after:
    /// `progress` then shows it there, finished only at the last page.
    public func setProgress(_ path: String, page: Int, pageCount: Int, at date: Date = Date()) throws(SQLiteError) {
        try withDatabase { database throws(SQLiteError) in try Self.setProgress(path, page: page, pageCount: pageCount, at: date, in: database) }
    }

    static func setProgress(_ path: String, page: Int, pageCount: Int, at date: Date, in database: Database) throws(SQLiteError) {
        var seen = PagesSeen()
        for number in 0 ... page { seen.insert(number) }
        let upsert = try database.prepare("""
            INSERT INTO reading (path, page_count, last_page, pages_seen, updated_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(path) DO UPDATE SET page_count = excluded.page_count, last_page = excluded.last_page,
                pages_seen = excluded.pages_seen, updated_at = excluded.updated_at
            """)
        try upsert.bind([path, pageCount, page, seen.json, date.timeIntervalSince1970])
        try upsert.step()
    }

    /// The comic's page count as the state knows it: from its reading state, else from the index
    /// (a comic listed by a mount or `inkyfs index`); nil when neither has it.
    public func knownPageCount(_ path: String) -> Int? {
        if let row = progress(includeFinished: true).first(where: { $0.path == path }), row.pageCount > 0 { return row.pageCount }
        guard case .success(let identity) = FileIdentity.of(path),
              case .success(let listing)? = indexedListing(LibraryFile(path: path), identity: identity) else { return nil }
        return listing.pages.count
    }
}

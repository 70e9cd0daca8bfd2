import InkyCore

/// Each comic's page hashes (SHA-256 of every page's bytes, in reading order), kept under the
/// same key as its listing: `inkyfs duplicates` reads every page of a comic once to find another
/// container holding the same pages, and never again while the file stays the same.
extension StateDatabase {
    /// The stored hashes of `file` if they were made for exactly `identity`: 32 bytes a page.
    public func pageHashes(_ file: LibraryFile, identity: FileIdentity) -> [UInt8]? {
        let path = file.path
        return try? withStatement("SELECT size, mtime_ns, inode, pages FROM page_hashes WHERE path = ?") {
            query throws(SQLiteError) -> [UInt8]? in
            try query.bind(path, at: 1)
            guard try query.step(), query.int64(at: 0) == identity.size, query.int64(at: 1) == identity.modifiedNanoseconds,
                  UInt64(bitPattern: query.int64(at: 2)) == identity.inode,
                  let pages = query.blob(at: 3), pages.count % 32 == 0 else { return nil }
            return pages
        } ?? nil
    }

    /// Stores the page hashes of `file` as it was when they were made (`identity`).
    public func storePageHashes(_ file: LibraryFile, identity: FileIdentity, _ pages: [UInt8]) {
        storePageHashes([(file, identity, pages)])
    }

    /// Stores many in one transaction: a commit per comic made hashing 20,000 small comics wait
    /// on the disk six times longer than it computed.
    public func storePageHashes(_ rows: [(file: LibraryFile, identity: FileIdentity, pages: [UInt8])]) {
        guard !rows.isEmpty else { return }
        _ = try? withDatabase { database throws(SQLiteError) in
            try database.immediateTransaction { () throws(SQLiteError) in
                let statement = try database.prepare("""
                    INSERT OR REPLACE INTO page_hashes (path, size, mtime_ns, inode, pages) VALUES (?, ?, ?, ?, ?)
                    """)
                for row in rows {
                    statement.reset()
                    try statement.bind([row.file.path, row.identity.size, row.identity.modifiedNanoseconds,
                                        Int64(bitPattern: row.identity.inode), row.pages])
                    try statement.step()
                }
            }
        }
    }
}

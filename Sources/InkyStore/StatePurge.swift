/// Forgetting comics completely, for one moved into the vault: its name must not stay on disk
/// in plaintext, and a deleted row is not enough for that. SQLite leaves a deleted (or an
/// updated) row's bytes in the page's free space, and the WAL keeps every page version written
/// since its last checkpoint. So: delete with `secure_delete` (freed space is zeroed), rebuild
/// the file with VACUUM (no page keeps a stale copy from earlier updates), then checkpoint the
/// WAL into the file and truncate it to zero bytes.
extension StateDatabase {
    public struct PurgeOutcome: Sendable, Equatable {
        /// Rows deleted (index, metadata, reading state, bookmarks) or made nameless (node numbers).
        public var rowsDeleted: Int
        /// False when another connection kept the WAL from being emptied (its pages may still
        /// hold the names until the next checkpoint).
        public var walTruncated: Bool
    }

    /// Deletes every row keyed by one of `paths` and leaves no copy of them in the file or its WAL.
    public func purge(paths: [String]) throws(SQLiteError) -> PurgeOutcome {
        try withDatabase { database throws(SQLiteError) in
            try database.execute("PRAGMA secure_delete = ON")
            var deleted = 0
            // A node number stays taken (the running mount may still use it; a number must never
            // come back for another path), only its path is forgotten.
            let statements = ["DELETE FROM comic_index WHERE path = ?1", "DELETE FROM reading WHERE path = ?1",
                              "DELETE FROM bookmarks WHERE path = ?1", "DELETE FROM page_hashes WHERE path = ?1",
                              "DELETE FROM document_digests WHERE path = ?1", "DELETE FROM sync_devices WHERE path = ?1",
                              "DELETE FROM comic_arcs WHERE comic IN (SELECT id FROM comic_metadata WHERE path = ?1)",
                              "DELETE FROM comic_metadata WHERE path = ?1",
                              "UPDATE node_numbers SET path = '/nonexistent/inkyfs-forgotten/' || number WHERE path = ?1"]
            for sql in statements {
                let statement = try database.prepare(sql)
                for path in paths {
                    statement.reset()
                    try statement.bind(path, at: 1)
                    _ = try statement.step()
                    deleted += database.changes
                }
            }
            guard !isInMemory else { return PurgeOutcome(rowsDeleted: deleted, walTruncated: true) }
            try database.execute("VACUUM")
            let checkpoint = try database.prepare("PRAGMA wal_checkpoint(TRUNCATE)")
            _ = try checkpoint.step()
            // Columns: busy (1 when it could not finish), WAL frames, frames checkpointed.
            return PurgeOutcome(rowsDeleted: deleted, walTruncated: checkpoint.int64(at: 0) == 0)
        }
    }
}

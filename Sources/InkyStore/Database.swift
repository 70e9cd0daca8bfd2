internal import CSQLite

/// One SQLite connection, owning its `sqlite3*` and closing it in deinit.
///
/// Threading: opened with `SQLITE_OPEN_NOMUTEX` (SQLite's "multi-thread" mode), so SQLite
/// takes no per-connection lock. That is safe because `Database` is deliberately not
/// `Sendable`: Swift 6's checker already confines a connection to one isolation domain at
/// a time, and a serialized (FULLMUTEX) connection would pay a lock on every call while
/// still not making a multi-call sequence atomic. Code that needs concurrency opens one
/// connection per actor or thread; WAL lets those readers run beside one writer.
public final class Database {
    let handle: OpaquePointer
    /// The file path, or ":memory:" for a private in-memory database.
    public let path: String

    /// Opens (creating if needed) a read-write database file, or (`readOnly`) an existing one
    /// for reading only: a second connection that reads beside the writer (WAL).
    /// Foreign-key enforcement is switched on, since SQLite leaves it off by default
    /// only for backward compatibility, and our schemas should be able to rely on REFERENCES.
    public init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        var connection: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &connection, flags, nil)
        guard status == SQLITE_OK, let connection else {
            // SQLite hands back a handle even on failure (to carry the message); close it.
            let error = connection.map { SQLiteError(connection: $0, sql: nil) }
                ?? SQLiteError(extendedCode: status, message: "cannot open \(path)", sql: nil)
            sqlite3_close_v2(connection)
            throw error
        }
        sqlite3_extended_result_codes(connection, 1)
        self.handle = connection
        self.path = path
        try execute("PRAGMA foreign_keys = ON")
    }

    /// A private in-memory database, gone when this object is.
    public convenience init() throws(SQLiteError) {
        try self.init(path: ":memory:")
    }

    // close_v2 rather than close: if a Statement were somehow still alive, SQLite defers
    // the close until it is finalized instead of failing and leaking the connection.
    deinit { sqlite3_close_v2(handle) }

    /// Runs one or more `;`-separated statements, discarding any rows. Each statement is
    /// prepared and run in turn, so an error names the exact statement that failed.
    public func execute(_ sql: String) throws(SQLiteError) {
        let failure: SQLiteError? = sql.withCString { start in
            var cursor: UnsafePointer<CChar>? = start
            while let current = cursor, current.pointee != 0 {
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                guard sqlite3_prepare_v2(handle, current, -1, &statement, &tail) == SQLITE_OK else {
                    return SQLiteError(connection: handle, sql: Self.trimmed(String(cString: current)))
                }
                cursor = tail
                // Whitespace or a trailing comment compiles to no statement at all.
                guard let statement else { continue }
                defer { sqlite3_finalize(statement) }
                var status = sqlite3_step(statement)
                while status == SQLITE_ROW { status = sqlite3_step(statement) }
                guard status == SQLITE_DONE else {
                    return SQLiteError(connection: handle, sql: Self.trimmed(String(cString: sqlite3_sql(statement))))
                }
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// A statement cut from a script keeps the newline that followed the previous `;`.
    private static func trimmed(_ sql: String) -> String {
        String(sql.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    /// Compiles a single statement for binding and stepping.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it throws (its error
    /// is rethrown unchanged) or if the commit fails. IMMEDIATE takes the write lock up
    /// front: a deferred transaction that reads and then writes can fail with SQLITE_BUSY
    /// halfway through, where the busy timeout cannot help. Not re-entrant: SQLite has no
    /// nested BEGIN, so a nested call fails with `.error`.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        let result: T
        do {
            result = try body()
            try execute("COMMIT")
        } catch {
            rollbackIfActive()
            throw error
        }
        return result
    }

    /// The typed-throws form the module uses for its own transactions (migrations).
    func immediateTransaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            rollbackIfActive()
            throw error
        }
    }

    /// Some errors (SQLITE_FULL, an interrupted statement) make SQLite roll back by itself;
    /// a second ROLLBACK would then fail and mask the real error, hence the check.
    private func rollbackIfActive() {
        if sqlite3_get_autocommit(handle) == 0 {
            try? execute("ROLLBACK")
        }
    }

    /// Row id of the most recent successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE on this connection.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Rows inserted, updated or deleted through this connection since it was opened.
    public var totalChanges: Int { Int(sqlite3_total_changes64(handle)) }

    /// `PRAGMA user_version`: the schema version migrations compare against.
    public func userVersion() throws(SQLiteError) -> Int {
        let statement = try prepare("PRAGMA user_version")
        _ = try statement.step()
        return Int(statement.int64(at: 0))
    }

    /// Pragmas take no bound parameters; an `Int` interpolated here cannot inject SQL.
    public func setUserVersion(_ version: Int) throws(SQLiteError) {
        try execute("PRAGMA user_version = \(version)")
    }

    /// How long a call waits for another connection's lock before failing with `.busy`.
    /// SQLite's default is not to wait at all.
    public func setBusyTimeout(_ timeout: Duration) {
        let milliseconds = timeout.components.seconds * 1000
            + timeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: max(0, milliseconds)))
    }

    /// Asks for a journal mode and returns the one now in effect, which can differ: an
    /// in-memory database stays `.memory` when asked for `.wal`. WAL persists in the file.
    @discardableResult
    public func journalMode(_ mode: JournalMode) throws(SQLiteError) -> JournalMode {
        try readJournalMode("PRAGMA journal_mode = \(mode.rawValue)")
    }

    /// The journal mode in effect.
    public func journalMode() throws(SQLiteError) -> JournalMode {
        try readJournalMode("PRAGMA journal_mode")
    }

    private func readJournalMode(_ sql: String) throws(SQLiteError) -> JournalMode {
        let statement = try prepare(sql)
        _ = try statement.step()
        let reported = statement.text(at: 0) ?? ""
        guard let mode = JournalMode(rawValue: reported.lowercased()) else {
            throw SQLiteError(extendedCode: SQLITE_ERROR, message: "unexpected journal mode '\(reported)'", sql: sql)
        }
        return mode
    }
}

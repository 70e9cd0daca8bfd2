internal import CSQLite

/// One prepared statement, owning its `sqlite3_stmt*` and finalizing it in deinit.
/// It holds its `Database`, so the connection cannot close underneath it.
///
/// Parameters are numbered from 1 (SQLite's convention for `?`), result columns from 0.
public final class Statement {
    let handle: OpaquePointer
    public let database: Database
    public let sql: String

    init(database: Database, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        var remainder = ""
        let status = sql.withCString { start in
            var tail: UnsafePointer<CChar>?
            let status = sqlite3_prepare_v2(database.handle, start, -1, &statement, &tail)
            if let tail { remainder = String(cString: tail) }
            return status
        }
        guard status == SQLITE_OK else { throw SQLiteError(connection: database.handle, sql: sql) }
        guard let statement else {
            throw SQLiteError(extendedCode: SQLITE_MISUSE, message: "no SQL statement to prepare", sql: sql)
        }
        self.handle = statement
        self.database = database
        self.sql = sql
        // SQLite compiles only the first statement and would silently ignore the rest.
        if Self.containsStatement(remainder, in: database) {
            throw SQLiteError(extendedCode: SQLITE_MISUSE,
                              message: "prepare takes one statement; use execute for several", sql: sql)
        }
    }

    deinit { sqlite3_finalize(handle) }

    /// Whether leftover text holds more SQL, as opposed to whitespace or comments (which
    /// compile to no statement). Text that fails to compile counts as SQL too: it may name
    /// a table the first statement was about to create.
    private static func containsStatement(_ sql: String, in database: Database) -> Bool {
        if sql.allSatisfy({ $0.isWhitespace || $0 == ";" }) { return false }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(database.handle, sql, -1, &statement, nil)
        sqlite3_finalize(statement)
        return status != SQLITE_OK || statement != nil
    }

    // MARK: Binding

    /// Binds `value` (nil binds NULL) to the 1-based parameter `index`.
    /// Text and blobs are copied by SQLite (SQLITE_TRANSIENT), so the Swift value may go away.
    public func bind(_ value: (any SQLiteBindable)?, at index: Int) throws(SQLiteError) {
        let status: Int32
        let position = Int32(clamping: index)
        switch value?.sqliteValue ?? .null {
        case .null:
            status = sqlite3_bind_null(handle, position)
        case .integer(let integer):
            status = sqlite3_bind_int64(handle, position, integer)
        case .real(let real):
            status = sqlite3_bind_double(handle, position, real)
        case .text(let text):
            // withCString never yields nil, so "" binds as empty text rather than NULL;
            // the explicit byte count keeps any embedded NUL characters.
            status = text.withCString {
                sqlite3_bind_text64(handle, position, $0, sqlite3_uint64(text.utf8.count),
                                    inky_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
        case .blob(let bytes) where bytes.isEmpty:
            // An empty array may have no base address, and a NULL pointer would bind NULL.
            status = sqlite3_bind_zeroblob(handle, position, 0)
        case .blob(let bytes):
            status = bytes.withUnsafeBytes {
                sqlite3_bind_blob64(handle, position, $0.baseAddress, sqlite3_uint64($0.count),
                                    inky_sqlite_transient())
            }
        }
        guard status == SQLITE_OK else { throw SQLiteError(connection: database.handle, sql: sql) }
    }

    /// Binds by parameter name, prefix included (":name", "@name" or "$name").
    public func bind(_ value: (any SQLiteBindable)?, named name: String) throws(SQLiteError) {
        let index = sqlite3_bind_parameter_index(handle, name)
        guard index > 0 else {
            throw SQLiteError(extendedCode: SQLITE_RANGE, message: "no parameter named \(name)", sql: sql)
        }
        try bind(value, at: Int(index))
    }

    /// Binds all parameters in order; the count must match, so a forgotten one cannot
    /// silently stay NULL.
    public func bind(_ values: [(any SQLiteBindable)?]) throws(SQLiteError) {
        guard values.count == parameterCount else {
            throw SQLiteError(extendedCode: SQLITE_RANGE,
                              message: "\(values.count) values for \(parameterCount) parameters", sql: sql)
        }
        for (offset, value) in values.enumerated() { try bind(value, at: offset + 1) }
    }

    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// Sets every parameter back to NULL.
    public func clearBindings() { sqlite3_clear_bindings(handle) }

    // MARK: Stepping

    /// Advances to the next row: true if there is one to read, false when done.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError(connection: database.handle, sql: sql)
        }
    }

    /// Rewinds so the statement can run again; bindings are kept. Doesn't throw: the only
    /// error `sqlite3_reset` can report is the one the last `step` already threw.
    public func reset() { sqlite3_reset(handle) }

    // MARK: Reading the current row (0-based columns)

    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    public func columnName(at column: Int) -> String {
        sqlite3_column_name(handle, Int32(column)).map { String(cString: $0) } ?? ""
    }

    public func isNull(at column: Int) -> Bool {
        sqlite3_column_type(handle, Int32(column)) == SQLITE_NULL
    }

    /// SQLite's own conversion applies: NULL reads as 0, text is parsed as a number.
    public func int64(at column: Int) -> Int64 { sqlite3_column_int64(handle, Int32(column)) }

    public func double(at column: Int) -> Double { sqlite3_column_double(handle, Int32(column)) }

    /// nil for NULL. Decoded with the byte count, so embedded NULs survive.
    public func text(at column: Int) -> String? {
        guard !isNull(at: column) else { return nil }
        guard let bytes = sqlite3_column_text(handle, Int32(column)) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, Int32(column)))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// nil for NULL; an empty blob reads as [] (SQLite returns a NULL pointer for it).
    public func blob(at column: Int) -> [UInt8]? {
        guard !isNull(at: column) else { return nil }
        // Pointer first, then size: that order is what SQLite documents as safe.
        guard let bytes = sqlite3_column_blob(handle, Int32(column)) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, Int32(column)))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// The column in its stored storage class.
    public func value(at column: Int) -> SQLiteValue {
        switch sqlite3_column_type(handle, Int32(column)) {
        case SQLITE_INTEGER: .integer(int64(at: column))
        case SQLITE_FLOAT: .real(double(at: column))
        case SQLITE_TEXT: .text(text(at: column) ?? "")
        case SQLITE_BLOB: .blob(blob(at: column) ?? [])
        default: .null
        }
    }
}

internal import CSQLite

/// A failed SQLite call: the codes SQLite returned, its message, and the statement that
/// was running, so a log line alone says what failed and where.
public struct SQLiteError: Error, Equatable, Sendable {
    /// SQLite's primary result codes (the low byte of an extended code). Only the ones
    /// callers plausibly branch on are named; any other code still round-trips in `rawValue`.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public static let error = Code(rawValue: SQLITE_ERROR)
        public static let busy = Code(rawValue: SQLITE_BUSY)
        public static let locked = Code(rawValue: SQLITE_LOCKED)
        public static let noMemory = Code(rawValue: SQLITE_NOMEM)
        public static let readOnly = Code(rawValue: SQLITE_READONLY)
        public static let ioError = Code(rawValue: SQLITE_IOERR)
        public static let corrupt = Code(rawValue: SQLITE_CORRUPT)
        public static let full = Code(rawValue: SQLITE_FULL)
        public static let cannotOpen = Code(rawValue: SQLITE_CANTOPEN)
        public static let constraint = Code(rawValue: SQLITE_CONSTRAINT)
        public static let mismatch = Code(rawValue: SQLITE_MISMATCH)
        public static let misuse = Code(rawValue: SQLITE_MISUSE)
        public static let range = Code(rawValue: SQLITE_RANGE)
        public static let notADatabase = Code(rawValue: SQLITE_NOTADB)
    }

    /// Primary result code, e.g. `.constraint`.
    public let code: Code
    /// Extended result code, e.g. 2067 (SQLITE_CONSTRAINT_UNIQUE) vs 1555 (…_PRIMARYKEY).
    public let extendedCode: Int32
    public let message: String
    /// The SQL being prepared or run, or nil when no statement was involved (opening).
    public let sql: String?

    public init(extendedCode: Int32, message: String, sql: String?) {
        self.code = Code(rawValue: extendedCode & 0xFF)
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// Reads the connection's last error. Only meaningful right after the failing call,
    /// which is why a connection must not be shared between threads mid-call.
    init(connection: OpaquePointer, sql: String?) {
        self.init(extendedCode: sqlite3_extended_errcode(connection),
                  message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }
}

extension SQLiteError: CustomStringConvertible {
    public var description: String {
        let name = String(cString: sqlite3_errstr(extendedCode))
        let base = "SQLite error \(extendedCode) (\(name)): \(message)"
        return sql.map { "\(base) — in: \($0)" } ?? base
    }
}

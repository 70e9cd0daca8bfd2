internal import CSQLite

/// The SQLite library loaded at run time, for `inkyfs doctor` (WAL and some pragmas
/// depend on the version actually present, not the headers we built against).
public enum SQLiteVersion {
    /// For example "3.40.1".
    public static var version: String { String(cString: sqlite3_libversion()) }
}

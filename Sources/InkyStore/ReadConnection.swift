import Foundation

/// A read-only connection to the state database, opened on first use, used by one caller at a
/// time. WAL lets it read beside the writer: a reader here never waits for a transaction of
/// the main connection (a batch of listings being stored), nor for another reader's lock.
// @unchecked: lends its SQLite connection (a C handle, not Sendable) to callers under `lock`; Mutex's regions cannot.
final class ReadConnection: @unchecked Sendable {
    private let path: String
    private let lock = NSLock()
    private var database: Database?
    private var failed: Bool
    /// Statements asked for again and again (a comic's index row), compiled once.
    private var compiled = StatementCache()

    /// `available` false (an in-memory database: no file to open twice) never opens one.
    init(path: String, available: Bool) {
        self.path = path
        failed = !available
    }

    /// What a use of the connection gave: `unavailable` when there is none to open (the caller
    /// then uses the main connection).
    enum Use<T> {
        case done(T)
        case unavailable
    }

    /// Runs `body` with the connection.
    func with<T>(_ body: (Database) throws(SQLiteError) -> T) throws(SQLiteError) -> Use<T> {
        lock.lock()
        defer { lock.unlock() }
        guard let database = opened() else { return .unavailable }
        return .done(try body(database))
    }

    /// Runs `body` with `sql` compiled once for this connection and kept (rewound after, so it
    /// holds no read lock).
    func withStatement<T>(_ sql: String, _ body: (Statement) throws(SQLiteError) -> T) throws(SQLiteError) -> Use<T> {
        try with { database throws(SQLiteError) -> T in try compiled.run(sql, on: database, body) }
    }

    private func opened() -> Database? {
        if database == nil, !failed {
            do throws(SQLiteError) {
                let database = try Database(path: path, readOnly: true)
                database.setBusyTimeout(.seconds(5))
                // Point lookups and view queries walk a few B-tree pages each: 512 KiB keeps
                // the hot ones (SQLite's default, 2 MB a connection, showed in the daemon's peak).
                try database.execute("PRAGMA cache_size = -512")
                self.database = database
            } catch {
                failed = true
            }
        }
        return database
    }
}

/// Statements compiled once per connection and kept, each rewound after use so it holds no
/// read lock: compiling the index lookup again for every comic was a third of its time in a
/// listing. Used with its connection held.
struct StatementCache {
    private var statements: [String: Statement] = [:]

    mutating func run<T>(_ sql: String, on database: Database, _ body: (Statement) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        let statement: Statement
        if let kept = statements[sql] {
            statement = kept
        } else {
            statement = try database.prepare(sql)
            statements[sql] = statement
        }
        defer { statement.reset() }
        return try body(statement)
    }
}

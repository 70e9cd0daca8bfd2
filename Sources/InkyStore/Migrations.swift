/// Brings a database's schema up to date: applies, in order, each migration whose version
/// is above the database's `user_version`, each in its own transaction that also bumps
/// `user_version`, so a crash between migrations leaves a consistent, resumable state and
/// running it again is a no-op.
///
/// A database whose version is above `latestVersion` was written by a newer inkyfs; the
/// migrator leaves it alone, and whether to refuse it is the caller's decision.
public struct Migrator: Sendable {
    public struct Migration: Sendable, Equatable {
        public let version: Int
        public let sql: String
    }

    public let migrations: [Migration]

    /// Versions must be positive and strictly increasing: a mistake there is a programming
    /// error in a list written by hand, so it stops the program rather than the migration.
    public init(_ migrations: [(version: Int, sql: String)]) {
        var previous = 0
        for migration in migrations {
            precondition(migration.version > previous,
                         "migration versions must be positive and strictly increasing (\(migration.version) after \(previous))")
            previous = migration.version
        }
        self.migrations = migrations.map { Migration(version: $0.version, sql: $0.sql) }
    }

    public var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Applies what is missing and returns the versions applied (empty when up to date).
    @discardableResult
    public func migrate(_ database: Database) throws(SQLiteError) -> [Int] {
        var applied: [Int] = []
        for migration in migrations {
            // The version is read inside the write transaction, so two processes racing to
            // migrate the same file cannot both apply a step.
            let didApply = try database.immediateTransaction { () throws(SQLiteError) -> Bool in
                guard try database.userVersion() < migration.version else { return false }
                try database.execute(migration.sql)
                try database.setUserVersion(migration.version)
                return true
            }
            if didApply { applied.append(migration.version) }
        }
        return applied
    }
}

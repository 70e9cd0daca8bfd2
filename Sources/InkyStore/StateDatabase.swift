import Foundation
import InkyCore

/// The mount's memory between runs: the library index and reading state, in one SQLite file
/// (WAL, so the CLI can read while a daemon writes). Thread-safe: one connection behind a lock,
/// and two read-only ones behind their own, for the metadata views (`withReader`) and for
/// index lookups (`indexReader`).
///
/// A damaged or unreadable database never fails a mount: a damaged one is moved aside and
/// rebuilt (the index can always be rebuilt; reading state is lost only when the file itself is
/// corrupt), one on a read-only or full disk is left alone and this run keeps state in memory.
// @unchecked: lends its SQLite connection (a C handle, not Sendable) to callers under `lock`; Mutex's regions cannot.
public final class StateDatabase: @unchecked Sendable {
    public let path: String
    let database: Database
    private let lock = NSLock()
    /// Statements run once per comic while listing, compiled once (under `lock`).
    private var compiled = StatementCache()
    /// What happened at open, for the log (moved aside, rebuilt…); nil when all was well.
    public let recovery: String?
    /// Bumped (under `lock`) whenever a comic's metadata is stored or removed.
    var metadataChanges: UInt64 = 0
    /// The metadata views' connection: a view reading thousands of rows held `lock` for
    /// seconds, and every lookup of a comic in a library folder waited for it.
    private let viewReader: ReadConnection
    /// The index lookups' connection: a lookup of an unlisted comic waited for a batch of
    /// listings being stored, and for a view being built.
    let indexReader: ReadConnection

    /// Opens (creating the folder and file) and migrates the database at `path`.
    /// The database and its journals made (or kept) 0600 before SQLite opens them: they hold the
    /// reading history, and SQLite would create the file with the umask (0644) and give its WAL the
    /// same mode. Never through a symlink.
    static func makePrivate(_ path: String) {
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] {
            let descriptor = Glibc.open(file, (file == path ? O_CREAT : 0) | O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { continue }
            fchmod(descriptor, 0o600)
            close(descriptor)
        }
    }

    public static func open(at path: String) -> StateDatabase {
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        makePrivate(path)
        do throws(SQLiteError) {
            return try StateDatabase(path: path, recovery: nil)
        } catch {
            let aside = "\(path).damaged-\(Int(Date().timeIntervalSince1970))"
            var note = "state database \(path) could not be used (\(error.description))"
            // Only a damaged file is moved aside: a full or read-only disk says nothing about the
            // file, and moving a good database away would lose the reading state at the next mount.
            if [.corrupt, .notADatabase].contains(error.code), FileManager.default.fileExists(atPath: path) {
                if (try? FileManager.default.moveItem(atPath: path, toPath: aside)) != nil {
                    for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                    note += "; moved it to \(aside) and started a new one"
                    if let fresh = try? StateDatabase(path: path, recovery: note) { return fresh }
                } else {
                    note += "; it cannot be moved aside either"
                }
            }
            // Not even a new file (read-only or full disk): keep working from memory.
            return (try? StateDatabase(path: ":memory:", recovery: note + "; state is kept in memory for this run"))!
        }
    }

    private init(path: String, recovery: String?) throws(SQLiteError) {
        self.path = path
        self.recovery = recovery
        let onDisk = path != ":memory:"
        // Made here, not lazily: a lazy property's first use from two threads at once is a race.
        viewReader = ReadConnection(path: path, available: onDisk)
        indexReader = ReadConnection(path: path, available: onDisk)
        database = try Database(path: path)
        database.setBusyTimeout(.seconds(5))
        if onDisk {
            // Turning a new file to WAL commits through a rollback journal, with three syncs at
            // FULL (12 ms of a first mount here); a file cut short then is not a database and is
            // started afresh above, losing nothing, as it held nothing. A file already in WAL stays.
            try database.execute("PRAGMA synchronous = OFF")
            try database.journalMode(.wal)
            // In WAL, NORMAL syncs at checkpoints, not at every commit: the file stays consistent
            // through a crash, and a power cut may lose the last listings and page reads, which
            // the next mount lists and records again. FULL cost an fdatasync per listed comic.
            try database.execute("PRAGMA synchronous = NORMAL")
        }
        // A file that is not a database fails here, not later in the middle of a mount.
        try StateSchema.migrator.migrate(database)
        _ = try database.prepare("SELECT count(*) FROM comic_index").step()
    }

    /// Copies what the write-ahead log holds into the database file and syncs both, when this
    /// connection wrote anything: commits in WAL with `synchronous = NORMAL` reach the disk only
    /// at a checkpoint, so the daemon calls this after its last write, and a power cut after an
    /// unmount loses no page read. Waits for no reader. Nothing written, nothing done: even
    /// with nothing to copy a checkpoint syncs the files and the folder (about 2 ms here).
    public func checkpoint() {
        guard !isInMemory else { return }
        _ = try? withDatabase { database throws(SQLiteError) in
            guard database.totalChanges > 0 else { return }
            try database.execute("PRAGMA wal_checkpoint(PASSIVE)")
        }
    }

    /// True when the file could not be used and this run keeps its state in memory only.
    public var isInMemory: Bool { path == ":memory:" }

    public var schemaVersion: Int {
        (try? withDatabase { database throws(SQLiteError) in try database.userVersion() }) ?? 0
    }

    /// Moves whenever this process stores or removes a comic's metadata: a view rebuilds what it
    /// shows from the table only when it moved.
    public var metadataGeneration: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return metadataChanges
    }

    /// Runs `body` with the connection, one caller at a time.
    func withDatabase<T>(_ body: (Database) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(database)
    }

    /// Runs `body` with the read-only connection, one reader at a time; with the main connection
    /// where there is no file to open twice (in memory) or it cannot be opened. It sees what
    /// was committed: every write here commits before `lock` is let go, and a view reads
    /// `metadataGeneration` (under `lock`) before it asks, so it never misses a change it saw.
    func withReader<T>(_ body: (Database) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        if case .done(let result) = try viewReader.with(body) { return result }
        return try withDatabase(body)
    }

    /// Runs `body` with `sql` compiled once on the main connection and kept.
    func withStatement<T>(_ sql: String, _ body: (Statement) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try withDatabase { database throws(SQLiteError) -> T in try compiled.run(sql, on: database, body) }
    }

    /// `$XDG_STATE_HOME/inkyfs/state.sqlite`, or `DIR/state.sqlite` for `--state DIR`.
    public static func defaultPath(stateDirectory: String? = nil) -> String {
        (stateDirectory ?? XDGDirectories.state) + "/state.sqlite"
    }
}

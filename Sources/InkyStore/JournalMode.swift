/// SQLite journal modes (`PRAGMA journal_mode`). `.wal` lets readers proceed while one
/// writer commits, which the index needs when the FUSE daemon and the CLI share it.
public enum JournalMode: String, Sendable, CaseIterable {
    case delete, truncate, persist, memory, wal, off
}

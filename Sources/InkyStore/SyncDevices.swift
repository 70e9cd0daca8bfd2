import Foundation
import InkyCore

/// Progress pushed through KOReader's sync protocol lands in the one reading state (`reading`),
/// the mount's: `Continue Reading/` and `inkyfs progress` follow the e-reader. Beside it, which
/// device pushed it, because KOReader asks: it ignores progress that came from itself. The
/// device is the writer only while the reading row's time is the one it wrote; a page read
/// through a mount since then makes the mount the writer.
public struct SyncedProgress: Sendable, Equatable {
    public var progress: ReadingProgress
    /// Nil when the last reading was not pushed by a device (a mount, `inkyfs progress set`).
    public var device: String?
    public var deviceID: String?
}

extension StateDatabase {
    /// Puts the reader at `page` (0-based) of `file` as `device` said, in one transaction.
    public func recordSyncedProgress(_ file: LibraryFile, page: Int, pageCount: Int, device: String, deviceID: String?,
                                     at date: Date = Date()) throws(SQLiteError) {
        try withDatabase { database throws(SQLiteError) in
            try database.immediateTransaction { () throws(SQLiteError) in
                try Self.setProgress(file.path, page: page, pageCount: pageCount, at: date, in: database)
                let statement = try database.prepare("INSERT OR REPLACE INTO sync_devices (path, device, device_id, updated_at) VALUES (?, ?, ?, ?)")
                try statement.bind([file.path, device, deviceID, date.timeIntervalSince1970])
                try statement.step()
            }
        }
    }

    /// Where the reader is in `file`, finished or not, and who put them there; nil when never read.
    public func syncedProgress(_ file: LibraryFile) -> SyncedProgress? {
        let path = file.path
        return (try? withDatabase { database throws(SQLiteError) -> SyncedProgress? in
            let query = try database.prepare("""
                SELECT r.page_count, r.last_page, r.pages_seen, r.updated_at, s.device, s.device_id
                FROM reading r LEFT JOIN sync_devices s ON s.path = r.path AND s.updated_at = r.updated_at WHERE r.path = ?
                """)
            try query.bind(path, at: 1)
            guard try query.step() else { return nil }
            let seen = PagesSeen(json: query.text(at: 2) ?? "[]")
            let progress = ReadingProgress(path: path, pageCount: Int(query.int64(at: 0)), lastPage: Int(query.int64(at: 1)),
                                           pagesSeen: Set(seen.pages), updatedAt: Date(timeIntervalSince1970: query.double(at: 3)))
            return SyncedProgress(progress: progress, device: query.text(at: 4), deviceID: query.text(at: 5))
        }) ?? nil
    }
}

/// What KOReader pushed for a document that is no comic of the library (a book it reads from
/// elsewhere), kept as sent, per account, as its own sync server keeps it: the account's other
/// devices find it there.
public struct ForeignProgress: Sendable, Equatable {
    public var progress: String
    public var percentage: Double
    public var device: String
    public var deviceID: String?
    /// Seconds since 1970.
    public var timestamp: Int64

    public init(progress: String, percentage: Double, device: String, deviceID: String?, timestamp: Int64) {
        self.progress = progress
        self.percentage = percentage
        self.device = device
        self.deviceID = deviceID
        self.timestamp = timestamp
    }
}

extension StateDatabase {
    public func storeForeignProgress(account: String, document: String, _ value: ForeignProgress) throws(SQLiteError) {
        try withDatabase { database throws(SQLiteError) in
            let statement = try database.prepare("""
                INSERT OR REPLACE INTO sync_elsewhere (account, document, progress, percentage, device, device_id, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            try statement.bind([account, document, value.progress, value.percentage, value.device, value.deviceID, value.timestamp])
            try statement.step()
        }
    }

    public func foreignProgress(account: String, document: String) -> ForeignProgress? {
        (try? withDatabase { database throws(SQLiteError) -> ForeignProgress? in
            let query = try database.prepare("""
                SELECT progress, percentage, device, device_id, updated_at FROM sync_elsewhere WHERE account = ? AND document = ?
                """)
            try query.bind([account, document])
            guard try query.step() else { return nil }
            return ForeignProgress(progress: query.text(at: 0) ?? "", percentage: query.double(at: 1), device: query.text(at: 2) ?? "",
                                   deviceID: query.text(at: 3), timestamp: query.int64(at: 4))
        }) ?? nil
    }
}

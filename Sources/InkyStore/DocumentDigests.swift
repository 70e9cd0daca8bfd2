import Foundation
import InkyCore

/// The names KOReader knows a comic by: its partial MD5 (`KOReaderDigest`) of the file it
/// opened, which is either the comic's own file or the CBZ inkyfs served for it. Kept under the
/// comic's path with the identity they were made for: a file that changes (size, mtime, inode)
/// has neither any more, and is digested again when next needed.
public struct DocumentDigests: Sendable, Equatable {
    public var file: String?
    public var cbz: String?

    public init(file: String?, cbz: String?) {
        self.file = file
        self.cbz = cbz
    }
}

extension StateDatabase {
    /// The digests of `file` if they were made for exactly `identity`.
    public func documentDigests(_ file: LibraryFile, identity: FileIdentity) -> DocumentDigests? {
        let path = file.path
        return (try? withStatement("SELECT size, mtime_ns, inode, file_md5, cbz_md5 FROM document_digests WHERE path = ?") {
            query throws(SQLiteError) -> DocumentDigests? in
            try query.bind(path, at: 1)
            guard try query.step(), query.int64(at: 0) == identity.size, query.int64(at: 1) == identity.modifiedNanoseconds,
                  UInt64(bitPattern: query.int64(at: 2)) == identity.inode else { return nil }
            return DocumentDigests(file: query.text(at: 3), cbz: query.text(at: 4))
        }) ?? nil
    }

    /// Stores the file digests of many comics in one transaction. A row made for another
    /// identity is replaced whole (its CBZ digest was of the old file); one for the same
    /// identity keeps its CBZ digest.
    public func storeFileDigests(_ rows: [(file: LibraryFile, identity: FileIdentity, digest: String)]) {
        storeDigests(rows.map { ($0.file, $0.identity, "file_md5", $0.digest) })
    }

    /// Stores the digest of the CBZ served for `file` as it was (`identity`).
    public func storeCBZDigest(_ file: LibraryFile, identity: FileIdentity, digest: String) {
        storeDigests([(file, identity, "cbz_md5", digest)])
    }

    private func storeDigests(_ rows: [(file: LibraryFile, identity: FileIdentity, column: String, digest: String)]) {
        guard !rows.isEmpty else { return }
        _ = try? withDatabase { database throws(SQLiteError) in
            try database.immediateTransaction { () throws(SQLiteError) in
                for row in rows {
                    // `column` is one of two names written in this file, never input.
                    let other = row.column == "file_md5" ? "cbz_md5" : "file_md5"
                    let statement = try database.prepare("""
                        INSERT INTO document_digests (path, size, mtime_ns, inode, \(row.column)) VALUES (?1, ?2, ?3, ?4, ?5)
                        ON CONFLICT(path) DO UPDATE SET \(row.column) = ?5,
                            \(other) = CASE WHEN size = ?2 AND mtime_ns = ?3 AND inode = ?4 THEN \(other) END,
                            size = ?2, mtime_ns = ?3, inode = ?4
                        """)
                    try statement.bind([row.file.path, row.identity.size, row.identity.modifiedNanoseconds,
                                        Int64(bitPattern: row.identity.inode), row.digest])
                    try statement.step()
                }
            }
        }
    }

    /// The comics a digest names, by path, with the identity it was made for (the caller checks
    /// the file is still that one): either kind of digest. Usually one; a comic and its exact
    /// copy share one.
    public func comics(withDigest digest: String) -> [(file: LibraryFile, identity: FileIdentity)] {
        (try? withStatement("""
            SELECT path, size, mtime_ns, inode FROM document_digests WHERE file_md5 = ?1 OR cbz_md5 = ?1 ORDER BY path
            """) { query throws(SQLiteError) in
            try query.bind(digest, at: 1)
            return try Self.comicRows(query)
        }) ?? []
    }

    /// Comics of the index under `folder` (an absolute path) that were listed and have no file
    /// digest for the identity they were listed with: what a digest pass has left to do.
    public func comicsWithoutFileDigest(under folder: String) -> [(file: LibraryFile, identity: FileIdentity)] {
        (try? withDatabase { database throws(SQLiteError) in
            let query = try database.prepare("""
                SELECT i.path, i.size, i.mtime_ns, i.inode FROM comic_index i LEFT JOIN document_digests d ON d.path = i.path
                WHERE i.error IS NULL AND substr(i.path, 1, length(?1)) = ?1
                  AND (d.file_md5 IS NULL OR d.size != i.size OR d.mtime_ns != i.mtime_ns OR d.inode != i.inode)
                ORDER BY i.path
                """)
            try query.bind(folder.hasSuffix("/") ? folder : folder + "/", at: 1)
            return try Self.comicRows(query)
        }) ?? []
    }

    /// Every row of a query whose columns are path, size, mtime_ns, inode.
    private static func comicRows(_ query: Statement) throws(SQLiteError) -> [(file: LibraryFile, identity: FileIdentity)] {
        var found: [(file: LibraryFile, identity: FileIdentity)] = []
        while try query.step() {
            found.append((LibraryFile(path: query.text(at: 0) ?? ""),
                          FileIdentity(size: query.int64(at: 1), modifiedNanoseconds: query.int64(at: 2),
                                       inode: UInt64(bitPattern: query.int64(at: 3)))))
        }
        return found
    }
}

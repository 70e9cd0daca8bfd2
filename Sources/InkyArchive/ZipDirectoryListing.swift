import InkyCore

/// A ZIP's entries read from its central directory alone, as libarchive's seekable reader
/// would list them, without visiting a local header.
///
/// For a vault object every local header is a chunk to read and decrypt (one per page of a
/// comic of full-size pages: 400 round trips to list a 400-page comic), while the directory is
/// one or two chunks at the object's end. Each entry's local header is read only when its data
/// is (`LibArchiveComicReader` opens libarchive's streaming reader right there), and its name
/// must then be the directory's.
///
/// Only a directory that is plainly whole stands for the listing; for anything else `init`
/// gives nil and the caller lists through libarchive as before, so damage is reported as it is
/// for a library comic: a record cut short, a count that disagrees with the end record, an
/// offset past the file, ZIP64 sizes, a name libarchive might decode or rewrite otherwise (not
/// UTF-8 by its flag yet not ASCII, a Unicode Path field, a backslash), a symbolic link.
struct ZipDirectoryListing {
    let entries: [ArchiveEntry]
    /// Where each entry's local header starts, by entry index.
    let localHeaderOffsets: [Int64]

    init?(_ directory: ZipCentralDirectory) {
        guard directory.isComplete, !directory.records.isEmpty else { return nil }
        // libarchive's seekable reader visits members in local header order (the directory's
        // order in nearly every ZIP): indices stay those a libarchive listing would give.
        let records = directory.records.enumerated()
            .sorted { ($0.element.localHeaderOffset, $0.offset) < ($1.element.localHeaderOffset, $1.offset) }
            .map(\.element)
        var entries: [ArchiveEntry] = []
        entries.reserveCapacity(records.count)
        for record in records {
            guard record.hasPlainSizes, !record.hasUnicodePath,
                  record.flags & Self.utf8Names != 0 || record.name.allSatisfy({ $0 < 0x80 }) else { return nil }
            var path = String(decoding: record.name, as: UTF8.self)
            let kind = Self.kind(of: record, path: path)
            // libarchive turns a DOS maker's backslashes into slashes and reads a link's target
            // from its data: such members (never a comic's pages) are left to it.
            guard kind != .symlink, !record.name.contains(UInt8(ascii: "\\")) else { return nil }
            if kind == .directory && !path.hasSuffix("/") { path += "/" }   // as libarchive names folders
            entries.append(ArchiveEntry(index: entries.count, path: path, kind: kind, declaredSize: record.size,
                                        isEncrypted: record.flags & Self.encrypted != 0 || record.method == 99))
        }
        self.entries = entries
        localHeaderOffsets = records.map(\.localHeaderOffset)
    }

    /// General purpose flags: bit 11, names in UTF-8; bit 0 encrypted, bit 6 strong encryption.
    private static let utf8Names: UInt16 = 0x800
    private static let encrypted: UInt16 = 0x41

    /// The kind libarchive gives: a Unix maker's mode, DOS's folder bit, else a trailing slash.
    private static func kind(of record: ZipCentralDirectory.Record, path: String) -> EntryKind {
        var type: UInt32 = 0
        switch record.versionMadeBy >> 8 {
        case 3: type = (record.externalAttributes >> 16) & 0o170000
        case 0: type = record.externalAttributes & 0x10 != 0 ? 0o040000 : 0o100000
        default: break
        }
        if (type == 0 || type == 0o100000) && path.hasSuffix("/") { return .directory }
        return switch type {
        case 0, 0o100000: .file
        case 0o040000: .directory
        case 0o120000: .symlink
        case 0o020000, 0o060000: .device
        case 0o010000: .fifo
        case 0o140000: .socket
        default: .other
        }
    }
}

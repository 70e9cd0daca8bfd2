import InkyCore

/// Finds the members of a ZIP whose bytes lie unchanged in the archive's bytes (stored, not
/// encrypted), so the daemon can read those pages itself instead of through a worker: with a
/// `pread` of the file, or, for a vault object (whose bytes here are its plaintext), by
/// decrypting that range of the object.
///
/// Runs in the worker, after libarchive listed the archive (so every local header read here is
/// already in the page cache). Anything unusual leaves a member out, and out only means "read it
/// through libarchive as before": a name not unique or not matching libarchive's, ZIP64, a local
/// header that disagrees with the directory, a range outside the archive's bytes.
enum ZipStoredEntries {
    /// StoredData by libarchive entry index.
    static func locate(in source: FileSource, directory: ZipCentralDirectory, entries: [ArchiveEntry]) -> [Int: StoredData] {
        locate(in: source, records: records(of: directory, for: entries), entries: entries)
    }

    /// `locate` from the records `records(of:for:)` matched (the listing matches them once for
    /// this and for the checksums).
    static func locate(in source: FileSource, records: [Int: ZipCentralDirectory.Record], entries: [ArchiveEntry]) -> [Int: StoredData] {
        var found: [Int: StoredData] = [:]
        found.reserveCapacity(records.count)
        let declared = Dictionary(entries.map { ($0.index, $0.declaredSize) }, uniquingKeysWith: { first, _ in first })
        for (index, record) in records where record.method == 0 && record.hasPlainSizes
            && record.compressedSize == record.size && declared[index] == record.size {
            guard let offset = dataOffset(of: record, in: source) else { continue }
            found[index] = StoredData(offset: offset, crc32: record.crc32)
        }
        return found
    }

    /// The directory record of each plain file entry, by entry index: names unique in the
    /// directory and equal to libarchive's, not encrypted.
    static func records(of directory: ZipCentralDirectory, for entries: [ArchiveEntry]) -> [Int: ZipCentralDirectory.Record] {
        var byName: [NameBytes: ZipCentralDirectory.Record] = [:]
        byName.reserveCapacity(directory.records.count)
        var repeated: Set<NameBytes> = []
        for record in directory.records {
            let name = NameBytes(bytes: record.name)
            if byName.updateValue(record, forKey: name) != nil { repeated.insert(name) }
        }
        var found: [Int: ZipCentralDirectory.Record] = [:]
        found.reserveCapacity(entries.count)
        for entry in entries where entry.kind == .file && !entry.isEncrypted {
            let name = NameBytes(bytes: Array(entry.path.utf8))
            guard !repeated.contains(name), let record = byName[name], record.flags & Self.encrypted == 0 else { continue }
            found[entry.index] = record
        }
        return found
    }

    /// A name's bytes as a key hashed in one call: `[UInt8]`'s own hashing feeds the hasher
    /// byte by byte, which made matching names several percent of listing a small comic.
    private struct NameBytes: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// General purpose flags: bit 0 encrypted, bit 6 strong encryption.
    private static let encrypted: UInt16 = 0x41

    /// Where the member's data starts: after its local header, whose name and extra field
    /// lengths may differ from the directory's; nil unless the header agrees with the directory.
    private static func dataOffset(of record: ZipCentralDirectory.Record, in source: FileSource) -> Int64? {
        let headerLength = 30 + record.name.count
        guard let header = try? source.bytes(at: record.localHeaderOffset, count: headerLength), header.count == headerLength,
              ZipCentralDirectory.le32(header, 0) == 0x0403_4B50,
              ZipCentralDirectory.le16(header, 6) & Int(Self.encrypted) == 0,
              ZipCentralDirectory.le16(header, 8) == 0,                   // stored
              ZipCentralDirectory.le16(header, 26) == record.name.count,
              Array(header[30...]) == record.name else { return nil }
        let offset = record.localHeaderOffset + Int64(headerLength) + Int64(ZipCentralDirectory.le16(header, 28))
        let stored = StoredData(offset: offset, crc32: record.crc32)
        return stored.fits(size: record.size, inFileOf: source.size) ? offset : nil
    }
}

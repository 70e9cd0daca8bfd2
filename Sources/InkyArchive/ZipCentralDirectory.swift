import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore

/// A ZIP's central directory, read plainly (no ZIP64 record, no comment hiding the end record);
/// a directory past 4 GiB is found through the ZIP64 end record, and its plain records read.
///
/// It serves two hints, neither of which replaces libarchive's own reading: where the local
/// headers are, so listing can announce them all at once (WILLNEED) instead of one small random
/// read after another (400 for a 400-page comic, ~1 ms each on a busy disk); and which members
/// are stored, so their bytes can be read straight from the file (`ZipStoredEntries`).
struct ZipCentralDirectory {
    struct Record: Equatable {
        /// The name's bytes as stored (UTF-8 or CP437, per the flags).
        var name: [UInt8]
        var flags: UInt16
        var method: UInt16
        var crc32: UInt32
        var compressedSize: Int64
        var size: Int64
        var localHeaderOffset: Int64
        /// The high byte names the system that made it (3: Unix, whose mode is then the high half
        /// of `externalAttributes`; 0: DOS, whose bit 4 marks a folder).
        var versionMadeBy: UInt16 = 0
        var externalAttributes: UInt32 = 0
        /// Info-ZIP's Unicode Path field (0x7075) is in the record's extra field: the name may
        /// then be meant as another than `name`'s bytes.
        var hasUnicodePath = false

        /// ZIP64 puts 0xFFFFFFFF here and the real values in an extra field we do not read.
        var hasPlainSizes: Bool {
            compressedSize != 0xFFFF_FFFF && size != 0xFFFF_FFFF && localHeaderOffset != 0xFFFF_FFFF
        }
    }

    let records: [Record]
    /// The archive's comment, where ComicBookInfo keeps a comic's tags; empty when none.
    let comment: [UInt8]
    /// True when `records` are every member the end record counts, read from a directory that
    /// holds those records and nothing else, each inside the file: the directory can then stand
    /// for the listing itself (`ZipDirectoryListing`). False for anything short of that (damage,
    /// a record past the file, more than `maxEntries`).
    let isComplete: Bool

    /// [] when the end record or the directory cannot be read plainly (ZIP64, a comment that
    /// hides it, damage): the caller then simply goes without the hint.
    init(in source: FileSource, maxEntries: Int) {
        (records, comment, isComplete) = Self.read(source, maxEntries: maxEntries)
    }

    /// The local header offsets the directory names, in its order, each inside the file.
    var localHeaderOffsets: [Int64] { records.map(\.localHeaderOffset) }

    /// Two records whose members share bytes: the same local header (an overlap bomb's many
    /// names for one stream), or one member's data running into the next one's header. No
    /// zipper writes that; libarchive would list one name per local header, so the others
    /// would be pages that can never be read as themselves. Each member is taken to end at
    /// least at header + 30 + name + compressed size (its local extra field can only add).
    var hasOverlappingRecords: Bool {
        let plain = records.filter(\.hasPlainSizes).sorted { $0.localHeaderOffset < $1.localHeaderOffset }
        return zip(plain, plain.dropFirst()).contains { member, next in
            next.localHeaderOffset < member.localHeaderOffset + 30 + Int64(member.name.count) + member.compressedSize
        }
    }

    /// The end record sits in the last 22 bytes of nearly every ZIP (no comment): this much is
    /// read first, and the whole 64 KiB a comment may take only when the record is not in it.
    static let shortTailLength = 1_024

    private static func read(_ source: FileSource, maxEntries: Int) -> ([Record], [UInt8], Bool) {
        // The search runs backwards from the file's end, so a record found in the short tail is
        // the one the long tail would have given.
        guard let (tail, end) = endRecord(source, tailLength: shortTailLength)
                ?? endRecord(source, tailLength: ArchiveFormat.tailLength) else { return ([], [], false) }
        let commentLength = le16(tail, end + 20)
        let comment = end + 22 + commentLength <= tail.count ? Array(tail[(end + 22)..<(end + 22 + commentLength)]) : []
        let (found, complete) = records(source, tail: tail, end: end, maxEntries: maxEntries)
        return (found, comment, complete)
    }

    /// The file's last `tailLength` bytes (fewer in a smaller file) and where the end record starts in them.
    private static func endRecord(_ source: FileSource, tailLength: Int) -> ([UInt8], Int)? {
        let length = Int(min(source.size, Int64(tailLength)))
        guard length >= 22, let tail = try? source.bytes(at: source.size - Int64(length), count: length),
              tail.count == length, let end = ArchiveFormat.zipEndSignature(in: tail, below: tail.count - 21) else { return nil }
        return (tail, end)
    }

    /// The records, and whether they are complete (see `isComplete`).
    private static func records(_ source: FileSource, tail: [UInt8], end: Int, maxEntries: Int) -> ([Record], Bool) {
        var directorySize = Int64(le32(tail, end + 12)), directoryOffset = Int64(le32(tail, end + 16))
        var declaredCount = Int64(le16(tail, end + 10))
        if directoryOffset == 0xFFFF_FFFF || directorySize == 0xFFFF_FFFF {
            // A comic past 4 GiB: its members below 4 GiB still have plain records, whose CRC-32s
            // spare `--as cbz` a pass over the whole comic (4 GiB read at the first open).
            guard let (size, offset, count) = zip64Directory(source, tail: tail, end: end) else { return ([], false) }
            (directorySize, directoryOffset, declaredCount) = (size, offset, count)
        }
        guard directoryOffset != 0xFFFF_FFFF, directorySize > 0, directorySize <= 64 << 20,
              directoryOffset + directorySize <= source.size,
              let directory = try? source.bytes(at: directoryOffset, count: Int(directorySize)),
              directory.count == Int(directorySize) else { return ([], false) }
        var found: [Record] = []
        var at = 0, dropped = false
        while at + 46 <= directory.count, found.count < maxEntries, le32(directory, at) == 0x0201_4B50 {
            let nameLength = le16(directory, at + 28), extraLength = le16(directory, at + 30)
            let next = at + 46 + nameLength + extraLength + le16(directory, at + 32)
            guard next <= directory.count else { break }
            var record = Record(name: Array(directory[(at + 46)..<(at + 46 + nameLength)]),
                                flags: UInt16(le16(directory, at + 8)), method: UInt16(le16(directory, at + 10)),
                                crc32: le32(directory, at + 16), compressedSize: Int64(le32(directory, at + 20)),
                                size: Int64(le32(directory, at + 24)), localHeaderOffset: Int64(le32(directory, at + 42)))
            record.versionMadeBy = UInt16(le16(directory, at + 4))
            record.externalAttributes = le32(directory, at + 38)
            record.hasUnicodePath = hasField(0x7075, in: directory, from: at + 46 + nameLength, count: extraLength)
            if record.localHeaderOffset != 0xFFFF_FFFF && record.localHeaderOffset < source.size {
                found.append(record)
            } else {
                dropped = true
            }
            at = next
        }
        let complete = !dropped && at == directory.count && Int64(found.count) == declaredCount
        return (found, complete)
    }

    /// Whether the extra field at `start` (`count` bytes of id, length, data blocks) holds a block `id`.
    private static func hasField(_ id: Int, in bytes: [UInt8], from start: Int, count: Int) -> Bool {
        var at = start
        while at + 4 <= start + count {
            if le16(bytes, at) == id { return true }
            at += 4 + le16(bytes, at + 2)
        }
        return false
    }

    /// The directory's size, offset and member count from the ZIP64 end record, which the locator
    /// just before the end record names; nil unless both are where they say and the record ends
    /// where the locator begins (nothing between, as every zipper writes them).
    private static func zip64Directory(_ source: FileSource, tail: [UInt8], end: Int) -> (Int64, Int64, Int64)? {
        guard end >= 20, le32(tail, end - 20) == 0x0706_4B50 else { return nil }
        let record = le64(tail, end - 12)
        let locatorOffset = source.size - Int64(tail.count - (end - 20))
        guard record >= 0, record <= locatorOffset - 56,
              let bytes = try? source.bytes(at: record, count: 56), bytes.count == 56, le32(bytes, 0) == 0x0606_4B50 else { return nil }
        let size = le64(bytes, 40), offset = le64(bytes, 48)
        guard size >= 0, offset >= 0, offset <= record - size else { return nil }
        return (size, offset, le64(bytes, 32))
    }

    static func le64(_ bytes: [UInt8], _ at: Int) -> Int64 {
        Int64(bitPattern: UInt64(le32(bytes, at)) | UInt64(le32(bytes, at + 4)) << 32)
    }

    static func le16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }

    static func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }
}

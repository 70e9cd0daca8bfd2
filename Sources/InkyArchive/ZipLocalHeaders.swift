import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore

/// Where a ZIP's local headers are, read from its central directory.
///
/// libarchive's seekable ZIP reader reads the local header of every entry it passes, listing
/// or skipping: on an archive not in the page cache that is one small random read after another
/// (400 for a 400-page comic, ~1 ms each on a busy disk). Announcing them all at once
/// (WILLNEED) lets the disk fetch them together, so the walk then finds them in memory.
enum ZipLocalHeaders {
    /// The local header offsets the central directory names, in its order; [] when the end
    /// record or the directory cannot be read plainly (ZIP64, a comment that hides it, damage):
    /// this is a hint, and libarchive still reads the archive its own way.
    static func offsets(in source: FileSource, maxEntries: Int) -> [Int64] {
        let tailLength = Int(min(source.size, 22 + 65_535))
        guard tailLength >= 22, let tail = try? source.bytes(at: source.size - Int64(tailLength), count: tailLength),
              tail.count == tailLength else { return [] }
        guard let end = stride(from: tail.count - 22, through: 0, by: -1).first(where: { at in
            tail[at] == 0x50 && tail[at + 1] == 0x4B && tail[at + 2] == 0x05 && tail[at + 3] == 0x06
        }) else { return [] }
        let directorySize = Int64(le32(tail, end + 12)), directoryOffset = Int64(le32(tail, end + 16))
        guard directoryOffset != 0xFFFF_FFFF, directorySize > 0, directorySize <= 64 << 20,
              directoryOffset + directorySize <= source.size,
              let directory = try? source.bytes(at: directoryOffset, count: Int(directorySize)),
              directory.count == Int(directorySize) else { return [] }
        var found: [Int64] = []
        var at = 0
        while at + 46 <= directory.count, found.count < maxEntries, le32(directory, at) == 0x0201_4B50 {
            let offset = Int64(le32(directory, at + 42))
            if offset != 0xFFFF_FFFF && offset < source.size { found.append(offset) }
            at += 46 + le16(directory, at + 28) + le16(directory, at + 30) + le16(directory, at + 32)
        }
        return found
    }

    private static func le16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }

    private static func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }
}

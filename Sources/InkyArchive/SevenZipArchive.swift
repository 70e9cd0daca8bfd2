import InkyCore

/// A 7z archive's directory, read without libarchive: its entries and where each one's bytes
/// lie in which folder. Every size and count is checked against the file and the limits before
/// it is believed or allocated; anything this reader does not decode throws, and the caller
/// hands the archive to libarchive.
struct SevenZipArchive {
    var entries: [ArchiveEntry] = []
    /// By entry index; nil for entries without data (directories, empty files).
    var data: [SevenZipEntryData?] = []
    var folders: [SevenZipFolder] = []

    static let signature: [UInt8] = [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]
    /// A header (after decoding) larger than this is refused: 200,000 entries with long names fit.
    static let maxHeaderBytes: Int64 = 64 << 20

    static func read(_ source: FileSource, limits: ComicLimits) throws(ComicError) -> SevenZipArchive {
        let path = source.path
        let start = try source.bytes(at: 0, count: 32)
        guard start.count == 32, Array(start[0..<6]) == signature, start[6] == 0 else {
            throw .unsupportedFormat(path: path, format: "7z signature or version")
        }
        var cursor = SevenZipCursor(Array(start[8..<32]), path: path)
        guard try cursor.uint32() == CRC32.checksum(Array(start[12..<32])) else { throw cursor.corrupted("start header fails its CRC") }
        let offset = try cursor.fixedSize(), size = try cursor.fixedSize(), crc = try cursor.uint32()
        if size == 0 { return SevenZipArchive() }
        let room = source.size - 32
        guard offset <= room, size <= room - offset, size <= maxHeaderBytes else {
            throw cursor.corrupted("a header of \(size) bytes at \(offset) does not fit in the file")
        }
        var header = try source.bytes(at: 32 + offset, count: Int(size))
        guard header.count == Int(size), CRC32.checksum(header) == crc else { throw cursor.corrupted("fails its CRC") }
        // A header may be packed (7-Zip's default); packing it again and again proves nothing.
        for _ in 0..<4 {
            var cursor = SevenZipCursor(header, path: path)
            switch try cursor.number() {
            case 0x01:
                return try parseHeader(&cursor, fileSize: source.size, limits: limits)
            case 0x17:
                let streams = try SevenZipStreams.parse(&cursor, fileSize: source.size, limits: limits)
                guard streams.folders.count == 1, let folder = streams.folders.first else {
                    throw cursor.corrupted("a packed header of \(streams.folders.count) folders")
                }
                // Allocated whole before it is decoded: a few packed bytes may not claim 64 MiB.
                guard folder.unpackSize <= min(maxHeaderBytes, max(1 << 20, folder.packSize * 1_000)) else {
                    throw ComicError.limitExceeded(path: path, detail: "a 7z header of \(folder.packSize) bytes claims to unpack to \(folder.unpackSize)")
                }
                header = try SevenZipFolderReader.decodeWhole(folder, index: 0, source: source)
                if let crc = folder.crc, CRC32.checksum(header) != crc { throw cursor.corrupted("the packed header fails its CRC") }
            case let type:
                throw cursor.corrupted("starts with property \(type)")
            }
        }
        throw cursor.corrupted("packed more than 4 times")
    }

    private static func parseHeader(_ cursor: inout SevenZipCursor, fileSize: Int64, limits: ComicLimits) throws(ComicError) -> SevenZipArchive {
        var type = try cursor.number()
        if type == 0x02 {
            while true {
                if try cursor.number() == 0 { break }
                try cursor.skip(cursor.number())
            }
            type = try cursor.number()
        }
        if type == 0x03 { throw .unsupportedFormat(path: cursor.path, format: "7z with additional streams") }
        var streams = SevenZipStreams()
        if type == 0x04 {
            streams = try SevenZipStreams.parse(&cursor, fileSize: fileSize, limits: limits)
            type = try cursor.number()
        }
        var archive = SevenZipArchive()
        archive.folders = streams.folders
        if type == 0x05 {
            try archive.parseFiles(&cursor, streams: streams, limits: limits)
            type = try cursor.number()
        }
        guard type == 0x00 else { throw cursor.corrupted("unexpected property \(type)") }
        return archive
    }

    private mutating func parseFiles(_ cursor: inout SevenZipCursor, streams: SevenZipStreams, limits: ComicLimits) throws(ComicError) {
        let count = try cursor.count(limit: limits.maxEntries, bytesEach: 0, what: "entries")
        var emptyStream = Array(repeating: false, count: count)
        var emptyFile: [Bool] = [], anti: [Bool] = [], names: [String] = []
        var attributes: [UInt32?] = Array(repeating: nil, count: count)
        while true {
            let property = try cursor.number()
            if property == 0x00 { break }
            let size = try cursor.number()
            guard size <= UInt64(cursor.remaining) else { throw cursor.corrupted("file property \(property) runs past the header's end") }
            var field = SevenZipCursor(try cursor.bytes(Int(size)), path: cursor.path)
            let empties = emptyStream.filter { $0 }.count
            switch property {
            case 0x0E: emptyStream = try field.bits(count)
            case 0x0F: emptyFile = try field.bits(empties)
            case 0x10: anti = try field.bits(empties)
            case 0x11:
                guard try field.byte() == 0 else { throw .unsupportedFormat(path: cursor.path, format: "7z with external names") }
                names = try Self.names(&field)
            case 0x15:
                let defined = try field.definedBits(count)
                guard try field.byte() == 0 else { throw .unsupportedFormat(path: cursor.path, format: "7z with external attributes") }
                for index in 0..<count where defined[index] { attributes[index] = try field.uint32() }
            default: break    // times, start positions, padding: not needed to serve pages
            }
        }
        guard names.count == count else { throw cursor.corrupted("\(names.count) names for \(count) entries") }
        let locations = Self.locations(streams)
        var nextData = 0, nextEmpty = 0
        for index in 0..<count {
            var entryData: SevenZipEntryData?
            var kind = EntryKind.file
            if emptyStream[index] {
                let isFile = nextEmpty < emptyFile.count && emptyFile[nextEmpty]
                if nextEmpty < anti.count && anti[nextEmpty] { kind = .other } else if !isFile { kind = .directory }
                nextEmpty += 1
            } else {
                guard nextData < locations.count else { throw cursor.corrupted("more entries with data than the folders hold") }
                entryData = locations[nextData]
                nextData += 1
            }
            if kind == .file, let attribute = attributes[index] { kind = Self.kind(attribute) }
            entries.append(ArchiveEntry(index: index, path: names[index], kind: kind, declaredSize: entryData?.size ?? 0))
            data.append(entryData)
        }
        guard nextData == locations.count else { throw cursor.corrupted("the folders hold \(locations.count) entries, the list \(nextData)") }
    }

    /// Names: UTF-16LE, each ending in a 0 unit.
    private static func names(_ field: inout SevenZipCursor) throws(ComicError) -> [String] {
        let bytes = try field.bytes(field.remaining)
        guard bytes.count % 2 == 0 else { throw field.corrupted("names of an odd byte count") }
        var names: [String] = []
        var units: [UInt16] = []
        for pair in stride(from: 0, to: bytes.count, by: 2) {
            let unit = UInt16(bytes[pair]) | UInt16(bytes[pair + 1]) << 8
            if unit == 0 {
                names.append(String(decoding: units, as: UTF16.self))
                units.removeAll(keepingCapacity: true)
            } else {
                units.append(unit)
            }
        }
        guard units.isEmpty else { throw field.corrupted("a name without its end") }
        return names
    }

    /// Each entry's place in its folder, in the order the file list takes them.
    private static func locations(_ streams: SevenZipStreams) -> [SevenZipEntryData] {
        var result: [SevenZipEntryData] = []
        var next = 0
        for (folder, info) in streams.folders.enumerated() {
            var offset: Int64 = 0
            for stream in 0..<info.streamCount where next < streams.entries.count {
                let (size, crc) = streams.entries[next]
                result.append(SevenZipEntryData(folder: folder, stream: stream, offset: offset, size: size, crc: crc))
                offset += size
                next += 1
            }
        }
        return result
    }

    /// Windows attributes, with a Unix mode in the high half when bit 15 says so (p7zip writes it).
    private static func kind(_ attribute: UInt32) -> EntryKind {
        if attribute & 0x8000 != 0 {
            switch (attribute >> 16) & 0o170000 {
            case 0o120000: return .symlink
            case 0o040000: return .directory
            case 0o100000, 0: break
            default: return .other
            }
        }
        return attribute & 0x10 != 0 ? .directory : .file
    }
}

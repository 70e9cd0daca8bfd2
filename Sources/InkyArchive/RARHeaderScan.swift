import InkyCore

/// What RAR block headers say that neither libarchive nor unarr reports: whether entries
/// are encrypted (libarchive 3.6 misses RAR5 data encryption, unarr says nothing at all) and
/// whether the archive is solid. Reads headers only, jumping over data; bounded on hostile input.
struct RARHeaderScan: Equatable {
    var isSolid = false
    var headersEncrypted = false
    var encryptedEntries = 0
    /// RAR5 names of entries whose data is encrypted (their headers stay readable).
    var encryptedNames: Set<String> = []
    /// RAR4: for each non-directory file header in archive order, whether it is a symbolic
    /// link (unarr lists links as files whose data is the target path).
    var fileIsLink: [Bool] = []
    /// RAR5: each file header's name and data CRC-32 (nil when it has none), in archive order,
    /// so pages can be checked: libarchive 3.6 serves a stored RAR5 member without checking it.
    var fileChecksums: [FileChecksum] = []

    struct FileChecksum: Equatable {
        var name: String
        var crc32: UInt32?
    }

    var isEncrypted: Bool { headersEncrypted || encryptedEntries > 0 }

    static let maxBlocks = 200_000

    static func scan(_ source: FileSource) throws(ComicError) -> RARHeaderScan {
        let head = try source.bytes(at: 0, count: 8)
        guard let format = ArchiveFormat.sniff(head) else { return RARHeaderScan() }
        let read: (Int64, Int) throws(ComicError) -> [UInt8] = { offset, count throws(ComicError) in
            try source.bytes(at: offset, count: count)
        }
        switch format {
        case .rar4: return try scanRAR4(size: source.size, read: read)
        case .rar5: return try scanRAR5(size: source.size, read: read)
        default: return RARHeaderScan()
        }
    }

    /// RAR 1.5–4: 7-byte blocks (crc16, type, flags16, size16) + optional 32-bit data size.
    static func scanRAR4(size: Int64, read: (Int64, Int) throws(ComicError) -> [UInt8]) throws(ComicError) -> RARHeaderScan {
        var result = RARHeaderScan()
        var offset: Int64 = 7
        for _ in 0..<maxBlocks {
            let block = try read(offset, 32)
            guard block.count >= 7 else { break }
            let type = block[2]
            let flags = UInt16(block[3]) | UInt16(block[4]) << 8
            let headSize = Int64(UInt16(block[5]) | UInt16(block[6]) << 8)
            guard headSize >= 7 else { break }
            var dataSize: Int64 = 0
            if flags & 0x8000 != 0, block.count >= 11 {
                dataSize = Int64(block[7]) | Int64(block[8]) << 8 | Int64(block[9]) << 16 | Int64(block[10]) << 24
            }
            switch type {
            case 0x73: // main header
                if flags & 0x0008 != 0 { result.isSolid = true }
                if flags & 0x0080 != 0 { result.headersEncrypted = true; return result }
            case 0x74: // file header
                if flags & 0x0004 != 0 { result.encryptedEntries += 1 }
                // Fixed fields: pack/unpack size, host OS at +15, attributes at +28 (a Unix mode
                // when the host is Unix). Directories have all three window bits 0xE0 set.
                if flags & 0x00E0 != 0x00E0, block.count >= 32 {
                    let hostOS = block[15]
                    let attributes = UInt32(block[28]) | UInt32(block[29]) << 8 | UInt32(block[30]) << 16 | UInt32(block[31]) << 24
                    result.fileIsLink.append(hostOS == 3 && attributes & 0xF000 == 0xA000)
                }
                if flags & 0x0010 != 0 { result.isSolid = true }
                if flags & 0x0100 != 0 {
                    let high = try read(offset + 32, 4) // HIGH_PACK_SIZE follows the fixed fields
                    if high.count == 4 {
                        dataSize |= (Int64(high[0]) | Int64(high[1]) << 8 | Int64(high[2]) << 16 | Int64(high[3]) << 24) << 32
                    }
                }
            case 0x7B: // end of archive
                return result
            default: break
            }
            // A hostile HIGH_PACK_SIZE makes dataSize up to Int64.max: add without trapping.
            let (next, overflow) = (offset + headSize).addingReportingOverflow(dataSize)
            guard !overflow, next > offset, next < size else { break }
            offset = next
        }
        return result
    }

    /// RAR5: crc32, vint header size, vint type, vint flags, [vint extra size], [vint data size].
    static func scanRAR5(size: Int64, read: (Int64, Int) throws(ComicError) -> [UInt8]) throws(ComicError) -> RARHeaderScan {
        var result = RARHeaderScan()
        var offset: Int64 = 8
        for _ in 0..<maxBlocks {
            let prefix = try read(offset, 4 + 3)
            var cursor = VintCursor(bytes: prefix, at: 4)
            guard let headSize = cursor.next(), headSize > 0, headSize < 2 << 20 else { break }
            let headerStart = offset + 4 + Int64(cursor.position - 4)
            let header = try read(headerStart, Int(headSize))
            guard header.count == Int(headSize) else { break }
            var fields = VintCursor(bytes: header, at: 0)
            guard let type = fields.next(), let flags = fields.next() else { break }
            let extraSize = flags & 0x1 != 0 ? fields.next() ?? 0 : 0
            let dataSize = flags & 0x2 != 0 ? fields.next() ?? 0 : 0
            switch type {
            case 4: // archive encryption header: everything after it is encrypted
                result.headersEncrypted = true
                return result
            case 1: // main archive header
                if let archiveFlags = fields.next(), archiveFlags & 0x4 != 0 { result.isSolid = true }
            case 2: // file header
                guard let fileFlags = fields.next(), fields.next() != nil /* unpacked size */,
                      fields.next() != nil /* attributes */ else { break }
                if fileFlags & 0x2 != 0 { fields.skip(4) } // mtime
                var crc32: UInt32?
                if fileFlags & 0x4 != 0, fields.position + 4 <= header.count {
                    crc32 = header[fields.position..<fields.position + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
                }
                if fileFlags & 0x4 != 0 { fields.skip(4) } // crc32
                if let compression = fields.next(), compression & 0x40 != 0 { result.isSolid = true }
                var name = ""
                if fields.next() != nil /* host OS */, let length = fields.next(), length <= UInt64(header.count - fields.position) {
                    name = String(decoding: header[fields.position..<fields.position + Int(length)], as: UTF8.self)
                }
                result.fileChecksums.append(FileChecksum(name: name, crc32: fileFlags & 0x1 != 0 ? nil : crc32))   // 0x1: a directory
                if extraSize > 0, extraSize <= UInt64(header.count) {
                    var extra = VintCursor(bytes: header, at: header.count - Int(extraSize))
                    while extra.position < header.count, let recordSize = extra.next(), recordSize > 0 {
                        let recordStart = extra.position
                        if extra.next() == 1 { // record type 1: encryption
                            result.encryptedEntries += 1
                            result.encryptedNames.insert(name)
                        }
                        // A record size near 2^64 must end the walk, not trap (found by FuzzArchive).
                        let (recordEnd, overflow) = recordStart.addingReportingOverflow(Int(clamping: recordSize))
                        guard !overflow, recordEnd <= header.count else { break }
                        extra.position = recordEnd
                    }
                }
            case 5: // end of archive
                return result
            default: break
            }
            let (next, overflow) = (headerStart + Int64(headSize)).addingReportingOverflow(Int64(clamping: dataSize))
            guard !overflow, next > offset, next < size else { break }
            offset = next
        }
        return result
    }
}

/// RAR5's variable-length integers: 7 bits a byte, high bit set means more follow.
struct VintCursor {
    let bytes: [UInt8]
    var position: Int

    init(bytes: [UInt8], at position: Int) {
        self.bytes = bytes
        self.position = position
    }

    mutating func next() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count, shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    mutating func skip(_ count: Int) { position += count }
}

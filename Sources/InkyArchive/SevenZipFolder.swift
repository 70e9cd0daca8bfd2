import InkyCore

/// A coder of a 7z folder this reader decodes itself; any other makes the archive go to libarchive.
enum SevenZipMethod: Hashable {
    case copy
    /// LZMA: its 5 property bytes (lc/lp/pb and the dictionary size).
    case lzma(properties: [UInt8])
    /// LZMA2: its dictionary-size byte.
    case lzma2(dictionary: UInt8)
    case delta(distance: UInt32)
    case branch(BranchFilter)

    enum BranchFilter: Hashable { case x86, powerPC, ia64, arm, armThumb, sparc }

    /// The method for a coder's ID and properties; nil for anything not handled here (PPMd,
    /// BZip2, Deflate, AES, BCJ2, ARM64, a branch filter with a start offset...).
    init?(id: [UInt8], properties: [UInt8]) {
        switch (id, properties.count) {
        case ([0x00], 0): self = .copy
        case ([0x21], 1) where properties[0] <= 40: self = .lzma2(dictionary: properties[0])
        case ([0x03, 0x01, 0x01], 5) where properties[0] < 9 * 5 * 5: self = .lzma(properties: properties)
        case ([0x03], 1): self = .delta(distance: UInt32(properties[0]) + 1)
        case ([0x03, 0x03, 0x01, 0x03], 0): self = .branch(.x86)
        case ([0x03, 0x03, 0x02, 0x05], 0): self = .branch(.powerPC)
        case ([0x03, 0x03, 0x04, 0x01], 0): self = .branch(.ia64)
        case ([0x03, 0x03, 0x05, 0x01], 0): self = .branch(.arm)
        case ([0x03, 0x03, 0x07, 0x01], 0): self = .branch(.armThumb)
        case ([0x03, 0x03, 0x08, 0x05], 0): self = .branch(.sparc)
        default: return nil
        }
    }

    var isLZMA: Bool {
        switch self {
        case .lzma, .lzma2: true
        default: false
        }
    }
}

/// One folder: a chain of coders over one packed stream, decoded as one stream whose bytes are
/// the folder's entries back to back.
struct SevenZipFolder: Equatable {
    /// In 7z's order: `coders[0]` yields the folder's bytes, the last one reads the packed
    /// stream (liblzma's filter order, too).
    var coders: [SevenZipMethod]
    var packOffset: Int64 = 0
    var packSize: Int64 = 0
    var unpackSize: Int64 = 0
    var crc: UInt32?
    /// Entries stored in it (7z's "substreams").
    var streamCount = 1

    /// Copy alone, or LZMA/LZMA2 at the packed end with only filters before it: the chains
    /// 7-Zip writes for comics and that liblzma decodes in one raw decoder.
    var isDecodable: Bool {
        guard let last = coders.last else { return false }
        if coders == [.copy] { return true }
        return last.isLZMA && coders.dropLast().allSatisfy { !$0.isLZMA && $0 != .copy }
    }
}

/// Where one entry's bytes lie in its folder's decoded stream.
struct SevenZipEntryData: Equatable {
    var folder: Int
    /// Its position among the folder's entries.
    var stream: Int
    var offset: Int64
    var size: Int64
    var crc: UInt32?
}

/// A 7z "StreamsInfo": the folders with their packed ranges and the sizes and CRCs of the
/// entries in them. Everything is checked against the file's size before it is believed.
struct SevenZipStreams {
    var folders: [SevenZipFolder] = []
    /// Sizes and CRCs of the entries, folder by folder, in order.
    var entries: [(size: Int64, crc: UInt32?)] = []

    static let maxCoders = 4

    static func parse(_ cursor: inout SevenZipCursor, fileSize: Int64, limits: ComicLimits) throws(ComicError) -> SevenZipStreams {
        var streams = SevenZipStreams()
        var packPosition: Int64 = 0
        var packSizes: [Int64] = []
        var type = try cursor.number()
        if type == 0x06 {
            packPosition = try cursor.size()
            let count = try cursor.count(limit: limits.maxEntries, what: "packed streams")
            while true {
                let property = try cursor.number()
                if property == 0x00 { break }
                if property == 0x09 {
                    packSizes = try (0..<count).map { _ throws(ComicError) in try cursor.size() }
                } else if property == 0x0A {
                    _ = try cursor.digests(count)
                } else {
                    throw cursor.corrupted("unknown pack property \(property)")
                }
            }
            guard packSizes.count == count else { throw cursor.corrupted("packed streams without sizes") }
            type = try cursor.number()
        }
        if type == 0x07 {
            try streams.parseFolders(&cursor, limits: limits)
            type = try cursor.number()
        }
        try streams.placePacked(at: packPosition, sizes: packSizes, fileSize: fileSize, cursor: cursor)
        streams.entries = streams.folders.map { ($0.unpackSize, $0.crc) }
        if type == 0x08 {
            try streams.parseSubstreams(&cursor, limits: limits)
            type = try cursor.number()
        }
        guard type == 0x00 else { throw cursor.corrupted("unexpected property \(type) in streams info") }
        return streams
    }

    private mutating func parseFolders(_ cursor: inout SevenZipCursor, limits: ComicLimits) throws(ComicError) {
        guard try cursor.number() == 0x0B else { throw cursor.corrupted("no folder list") }
        let count = try cursor.count(limit: limits.maxEntries, bytesEach: 2, what: "folders")
        guard try cursor.byte() == 0 else { throw ComicError.unsupportedFormat(path: cursor.path, format: "7z with external folder list") }
        var outputs: [Int] = []
        for _ in 0..<count {
            let (chain, output) = try Self.parseCoders(&cursor)
            folders.append(SevenZipFolder(coders: chain))
            outputs.append(output)
        }
        guard try cursor.number() == 0x0C else { throw cursor.corrupted("no unpack sizes") }
        for index in folders.indices {
            // One size per coder output; the folder's own is that of the coder nothing reads.
            let sizes = try folders[index].coders.map { _ throws(ComicError) in try cursor.size() }
            folders[index].unpackSize = sizes[outputs[index]]
        }
        while true {
            let property = try cursor.number()
            if property == 0x00 { return }
            guard property == 0x0A else { throw cursor.corrupted("unknown folder property \(property)") }
            for (index, crc) in try cursor.digests(count).enumerated() { folders[index].crc = crc }
        }
    }

    /// A linear chain of one-in, one-out coders, put in liblzma's order (the coder yielding the
    /// folder's bytes first, the one reading the packed stream last), and the index of the
    /// folder's output among the coders' (7-Zip writes the packed-side coder first).
    private static func parseCoders(_ cursor: inout SevenZipCursor) throws(ComicError) -> (chain: [SevenZipMethod], output: Int) {
        let unsupported = ComicError.unsupportedFormat(path: cursor.path, format: "7z coder chain")
        let count = try cursor.count(limit: maxCoders, what: "coders in one folder")
        guard count > 0 else { throw cursor.corrupted("a folder without coders") }
        var coders: [SevenZipMethod] = []
        for _ in 0..<count {
            let flags = try cursor.byte()
            guard flags & 0xC0 == 0 else { throw unsupported }
            let id = try cursor.bytes(Int(flags & 0x0F))
            if flags & 0x10 != 0 {
                guard try cursor.number() == 1, try cursor.number() == 1 else { throw unsupported }
            }
            let properties = flags & 0x20 != 0 ? try cursor.bytes(cursor.count(limit: 256, what: "property bytes")) : []
            guard let method = SevenZipMethod(id: id, properties: properties) else { throw unsupported }
            coders.append(method)
        }
        // A bind pair feeds coder `input` from coder `output`'s bytes.
        var source: [Int: Int] = [:]
        for _ in 0..<count - 1 {
            let input = try cursor.number(), output = try cursor.number()
            guard input < UInt64(count), output < UInt64(count), source[Int(input)] == nil else { throw unsupported }
            source[Int(input)] = Int(output)
        }
        let fed = Set(source.values)
        guard let last = (0..<count).first(where: { !fed.contains($0) }) else { throw unsupported }
        var order = [last]
        while let next = source[order[order.count - 1]], order.count < count { order.append(next) }
        guard Set(order).count == count, source[order[order.count - 1]] == nil else { throw unsupported }
        return (order.map { coders[$0] }, last)
    }

    /// Folder `i` reads packed stream `i`: each must lie inside the file, after the signature header.
    private mutating func placePacked(at position: Int64, sizes: [Int64], fileSize: Int64, cursor: SevenZipCursor) throws(ComicError) {
        guard sizes.count >= folders.count else { throw cursor.corrupted("\(folders.count) folders but \(sizes.count) packed streams") }
        guard position <= fileSize else { throw cursor.corrupted("packed streams start past the end of the file") }
        var offset = 32 + position
        for index in folders.indices {
            guard sizes[index] <= fileSize - offset else {
                throw cursor.corrupted("packed stream \(index) lies past the end of the file")
            }
            folders[index].packOffset = offset
            folders[index].packSize = sizes[index]
            offset += sizes[index]
        }
    }

    private mutating func parseSubstreams(_ cursor: inout SevenZipCursor, limits: ComicLimits) throws(ComicError) {
        var type = try cursor.number()
        if type == 0x0D {
            var total = 0
            for index in folders.indices {
                folders[index].streamCount = try cursor.count(limit: limits.maxEntries - total, bytesEach: 0, what: "entries")
                total += folders[index].streamCount
            }
            type = try cursor.number()
        }
        entries = []
        for folder in folders where folder.streamCount > 0 {
            var sum: Int64 = 0
            if folder.streamCount > 1 {
                guard type == 0x09 else { throw cursor.corrupted("a solid folder without entry sizes") }
                for _ in 1..<folder.streamCount {
                    let size = try cursor.size()
                    guard size <= folder.unpackSize - sum else { throw cursor.corrupted("entries larger than their folder") }
                    sum += size
                    entries.append((size, nil))
                }
            }
            entries.append((folder.unpackSize - sum, folder.streamCount == 1 ? folder.crc : nil))
        }
        if type == 0x09 { type = try cursor.number() }
        while type != 0x00 {
            guard type == 0x0A else { throw cursor.corrupted("unknown entry property \(type)") }
            // Digests for every entry whose CRC its folder does not already give.
            let unknown = entries.indices.filter { entries[$0].crc == nil }
            for (index, crc) in zip(unknown, try cursor.digests(unknown.count)) { entries[index].crc = crc }
            type = try cursor.number()
        }
    }
}

/// The byte layout of a ZIP whose members are stored (method 0), made without the members'
/// bytes: given their names, sizes and CRC-32s it knows the whole file's size and, for any byte
/// range, which header bytes and which member byte ranges make it. A comic served as a CBZ is
/// one of these: `stat` needs the size before any page is read, a reader may start at the
/// central directory at the end, and only the member ranges a read touches are fetched.
///
/// ZIP64 records are written where a size, an offset or the member count does not fit the
/// classic fields (a comic past 4 GiB, more than 65,534 members); otherwise the file is the
/// plainest ZIP there is, for the oldest readers. Names are UTF-8 (flag bit 11). Every member's
/// data ends on a 4 KiB boundary, so the central directory starts on one (each local header
/// carries an extra field of padding, as zipalign pads): the kernel reads whole pages of a
/// file, and a kernel page holding bytes of two members would decode both to read one (a
/// thumbnailer reading the first page), fail both when one is damaged, and the directory's
/// first page would decode the last member. About 2 KiB per page: under 1% of a comic.
public struct StoredZipLayout: Sendable {
    public struct Member: Sendable, Equatable {
        public var name: String
        public var size: Int64
        public var crc32: UInt32

        public init(name: String, size: Int64, crc32: UInt32) {
            self.name = name
            self.size = size
            self.crc32 = crc32
        }
    }

    /// A part of a byte range: bytes of the headers, or bytes of a member's data.
    public enum Piece: Sendable, Equatable {
        case bytes([UInt8])
        case member(index: Int, range: Range<Int64>)
    }

    public let members: [Member]
    /// Offset of each member's local header; the member's data follows its header.
    private let headerOffsets: [Int64]
    private let dataOffsets: [Int64]
    private let time: UInt16
    private let date: UInt16
    /// Bytes of padding in each member's local header.
    private let paddings: [Int]
    /// Offset of the central directory, and everything from there to the end.
    public let centralDirectoryOffset: Int64
    private let tail: [UInt8]

    /// The whole file's size in bytes.
    public var totalSize: Int64 { centralDirectoryOffset + Int64(tail.count) }

    static let limit32: Int64 = 0xFFFF_FFFF

    /// `modified` (seconds since 1970, UTC) dates every member, in DOS form (2-second steps, from
    /// 1980). `alignment`: where members' data ends (1: packed, no padding).
    public init(members: [Member], modified: Int64, alignment: Int64 = pageAlignment) {
        self.members = members
        (time, date) = Self.dosTime(modified)
        var headers: [Int64] = []
        var data: [Int64] = []
        var at: Int64 = 0
        var paddings: [Int] = []
        for member in members {
            headers.append(at)
            let padding = Self.padding(member, headerAt: at, alignment)
            paddings.append(padding)
            at += Int64(Self.localHeaderLength(member) + padding)
            data.append(at)
            at += member.size
        }
        self.paddings = paddings
        headerOffsets = headers
        dataOffsets = data
        centralDirectoryOffset = at
        var central = ZipBytes()
        for (index, member) in members.enumerated() {
            Self.centralRecord(member, headerOffset: headers[index], padding: paddings[index], time: time, date: date, into: &central)
        }
        let directorySize = Int64(central.bytes.count)
        let count = members.count
        let needs64 = count >= 0xFFFF || directorySize >= Self.limit32 || at >= Self.limit32
        if needs64 {
            let recordOffset = at + directorySize
            central.u32(0x0606_4B50)
            central.u64(44)
            central.u16(45 | 3 << 8)
            central.u16(45)
            central.u32(0)
            central.u32(0)
            central.u64(UInt64(count))
            central.u64(UInt64(count))
            central.u64(UInt64(directorySize))
            central.u64(UInt64(at))
            central.u32(0x0706_4B50)
            central.u32(0)
            central.u64(UInt64(recordOffset))
            central.u32(1)
        }
        central.u32(0x0605_4B50)
        central.u16(0)
        central.u16(0)
        central.u16(needs64 ? 0xFFFF : UInt16(count))
        central.u16(needs64 ? 0xFFFF : UInt16(count))
        central.u32(needs64 ? 0xFFFF_FFFF : UInt32(directorySize))
        central.u32(needs64 ? 0xFFFF_FFFF : UInt32(at))
        central.u16(0)
        tail = central.bytes
    }

    /// The size the layout of `members` has, without making its central directory: `stat` of
    /// every CBZ in a folder costs arithmetic only.
    public static func size(of members: [Member], alignment: Int64 = pageAlignment) -> Int64 {
        var at: Int64 = 0, directory: Int64 = 0
        for member in members {
            let largeOffset = at >= limit32
            let padding = padding(member, headerAt: at, alignment)
            at += Int64(localHeaderLength(member) + padding) + member.size
            let extra = needs64(member) || largeOffset ? 4 + (needs64(member) ? 16 : 0) + (largeOffset ? 8 : 0)
                : centralMarksPadding(member, padding: padding, largeOffset: largeOffset) ? 4 : 0
            directory += Int64(46 + member.name.utf8.count + extra)
        }
        let needs64 = members.count >= 0xFFFF || directory >= limit32 || at >= limit32
        return at + directory + (needs64 ? 56 + 20 : 0) + 22
    }

    /// What makes the bytes `offset ..< offset + length` (cut at the end of the file), in order.
    public func pieces(offset: Int64, length: Int) -> [Piece] {
        guard offset >= 0, length > 0, offset < totalSize else { return [] }
        let end = min(totalSize, offset + Int64(length))
        var pieces: [Piece] = []
        var at = offset
        var index = memberIndex(containing: at)
        while at < end, index < members.count {
            let headerStart = headerOffsets[index], dataStart = dataOffsets[index]
            let dataEnd = dataStart + members[index].size
            if at < dataStart {
                let header = Self.localHeader(members[index], time: time, date: date,
                                              padding: paddings[index])
                let from = Int(at - headerStart), to = Int(min(end, dataStart) - headerStart)
                pieces.append(.bytes(Array(header[from..<to])))
                at = min(end, dataStart)
            }
            if at < end, at < dataEnd {
                let to = min(end, dataEnd)
                pieces.append(.member(index: index, range: (at - dataStart)..<(to - dataStart)))
                at = to
            }
            if at >= dataEnd { index += 1 }
        }
        if at < end {
            let from = Int(at - centralDirectoryOffset), to = Int(end - centralDirectoryOffset)
            pieces.append(.bytes(Array(tail[from..<to])))
        }
        return pieces
    }

    /// The member whose header or data holds `offset` (members.count when it lies past them all).
    private func memberIndex(containing offset: Int64) -> Int {
        guard offset < centralDirectoryOffset else { return members.count }
        var low = 0, high = members.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if headerOffsets[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }

    // MARK: - Records

    private static func needs64(_ member: Member) -> Bool { member.size >= limit32 }

    /// The kernel's page size on x86-64 and most arm64 kernels.
    public static let pageAlignment: Int64 = 4096
    /// zipalign's extra field ID: readers skip extra fields they do not know.
    static let paddingID: UInt16 = 0xD935

    /// Padding that moves `end` to the next boundary; an extra field takes at least 4 bytes.
    private static func padding(before end: Int64, _ alignment: Int64) -> Int {
        guard alignment > 1 else { return 0 }
        var padding = Int((alignment - end % alignment) % alignment)
        if (1...3).contains(padding) { padding += Int(alignment) }
        return padding
    }

    /// unzip 6.0 spells a name that is not ASCII as "#U00e9" in a record with an extra field and
    /// as it is in one without: in a C locale, a member whose local header has an extra field and
    /// whose directory record has none (or the other way round) is "mismatching" and unzip exits 1.
    /// Such a name gets one in both or in neither.
    private static func isNonASCII(_ member: Member) -> Bool { member.name.utf8.contains { $0 >= 0x80 } }

    /// The member's padding when its header starts at `headerAt`: a non-ASCII name whose directory
    /// record has an extra field (an offset past 4 GiB) gets one in its header too.
    private static func padding(_ member: Member, headerAt: Int64, _ alignment: Int64) -> Int {
        let padding = padding(before: headerAt + Int64(localHeaderLength(member)) + member.size, alignment)
        guard padding == 0, !needs64(member), headerAt >= limit32, isNonASCII(member) else { return padding }
        return alignment > 1 ? Int(alignment) : 4
    }

    /// Whether the directory record carries an empty padding field to match its local header's.
    private static func centralMarksPadding(_ member: Member, padding: Int, largeOffset: Bool) -> Bool {
        padding > 0 && !needs64(member) && !largeOffset && isNonASCII(member)
    }

    private static func localHeaderLength(_ member: Member) -> Int {
        30 + member.name.utf8.count + (needs64(member) ? 20 : 0)
    }

    static func localHeader(_ member: Member, time: UInt16, date: UInt16, padding: Int) -> [UInt8] {
        let large = needs64(member)
        var out = ZipBytes()
        out.u32(0x0403_4B50)
        out.u16(large ? 45 : 10)
        sharedFields(member, large: large, time: time, date: date, into: &out)
        out.u16(UInt16((large ? 20 : 0) + padding))
        out.bytes += member.name.utf8
        if large {
            out.u16(1)
            out.u16(16)
            out.u64(UInt64(member.size))
            out.u64(UInt64(member.size))
        }
        if padding > 0 {
            out.u16(paddingID)
            out.u16(UInt16(padding - 4))
            out.bytes += [UInt8](repeating: 0, count: padding - 4)  // a memset: a generic sequence is byte by byte
        }
        return out.bytes
    }

    private static func centralRecord(_ member: Member, headerOffset: Int64, padding: Int, time: UInt16, date: UInt16,
                                      into out: inout ZipBytes) {
        let largeSize = needs64(member), largeOffset = headerOffset >= limit32
        var extra = ZipBytes()
        if centralMarksPadding(member, padding: padding, largeOffset: largeOffset) {
            extra.u16(paddingID)
            extra.u16(0)
        }
        if largeSize || largeOffset {
            extra.u16(1)
            extra.u16(UInt16((largeSize ? 16 : 0) + (largeOffset ? 8 : 0)))
            if largeSize {
                extra.u64(UInt64(member.size))
                extra.u64(UInt64(member.size))
            }
            if largeOffset { extra.u64(UInt64(headerOffset)) }
        }
        let version: UInt16 = largeSize || largeOffset ? 45 : 10
        out.u32(0x0201_4B50)
        out.u16(version | 3 << 8) // made by Unix, so the external attributes carry a mode
        out.u16(version)
        sharedFields(member, large: largeSize, time: time, date: date, into: &out)
        out.u16(UInt16(extra.bytes.count))
        out.u16(0)
        out.u16(0)
        out.u16(0)
        out.u32(0o100444 << 16) // a regular file, read-only for all
        out.u32(largeOffset ? 0xFFFF_FFFF : UInt32(headerOffset))
        out.bytes += member.name.utf8
        out.bytes += extra.bytes
    }

    /// The fields a local header and a directory record share, from the flags to the name's length.
    private static func sharedFields(_ member: Member, large: Bool, time: UInt16, date: UInt16, into out: inout ZipBytes) {
        out.u16(0x0800) // UTF-8 names
        out.u16(0) // stored
        out.u16(time)
        out.u16(date)
        out.u32(member.crc32)
        out.u32(large ? 0xFFFF_FFFF : UInt32(member.size))
        out.u32(large ? 0xFFFF_FFFF : UInt32(member.size))
        out.u16(UInt16(member.name.utf8.count))
    }

    /// DOS time and date of a Unix time, UTC; before 1980 (DOS's epoch) is 1980-01-01.
    static func dosTime(_ seconds: Int64) -> (time: UInt16, date: UInt16) {
        guard seconds >= 315_532_800 else { return (0, 1 << 5 | 1) }
        let days = seconds / 86_400, rest = seconds % 86_400
        // Civil date from days since 1970 (Howard Hinnant's algorithm).
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = min(2107, yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
        let time = UInt16(rest / 3600) << 11 | UInt16(rest % 3600 / 60) << 5 | UInt16(rest % 60 / 2)
        let date = UInt16(year - 1980) << 9 | UInt16(month) << 5 | UInt16(day)
        return (time, date)
    }
}

/// Little-endian fields, as every ZIP record has them.
private struct ZipBytes {
    var bytes: [UInt8] = []

    mutating func u16(_ value: UInt16) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
    mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) } }
}

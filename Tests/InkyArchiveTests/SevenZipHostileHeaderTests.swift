import Foundation
import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// Every size and count in a 7z header lies until checked: the liblzma reader refuses what a
/// header claims before allocating it, and ends on every damaged header instead of looping.
final class SevenZipHostileHeaderTests: XCTestCase {
    func testAHeaderClaiming2To40EntriesFailsWithoutAllocatingThem() throws {
        let header: [UInt8] = [0x01, 0x05] + Self.number(1 << 40) + [0x00, 0x00]
        let bytes = Self.archive(packed: [], header: header)
        XCTAssertThrowsError(try SevenZipArchive.read(Self.source(bytes), limits: .default)) { error in
            guard case ComicError.limitExceeded(_, let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains("1099511627776 entries"), detail)
        }
        // libarchive then judges it, as it did before this reader.
        XCTAssertThrowsError(try ComicOpener.open(bytes: FuzzFindingTests.MemoryBytes(bytes), label: "lying.cb7")) { error in
            guard case ComicError.corrupted(let path, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "lying.cb7")
        }
    }

    /// A folder claiming 1 TB: its second entry is too large to be a page, and reading the
    /// first fails cleanly, whether the dictionary it asks for is small or 4 GiB.
    func testAFolderClaimingATerabyteFailsCleanly() throws {
        for (dictionary, expectMemoryRefusal) in [(UInt8(16), false), (UInt8(40), true)] {
            let header = Self.folderHeader(coder: [0x21, 0x21, 0x01, dictionary], packSize: 64, unpackSize: 1 << 40,
                                           entrySizes: [100], names: ["1.jpg", "2.jpg"])
            let bytes = Self.archive(packed: [UInt8](repeating: 0, count: 64), header: header)
            let reader = try ComicOpener.open(bytes: FuzzFindingTests.MemoryBytes(bytes), label: "terabyte.cb7")
            XCTAssertTrue(reader is SevenZipComicReader)
            XCTAssertEqual(reader.listing.pages.map(\.sourcePath), ["1.jpg"])
            XCTAssertThrowsError(try reader.readPage(reader.listing.pages[0])) { error in
                switch error {
                case ComicError.limitExceeded where expectMemoryRefusal, ComicError.corrupted where !expectMemoryRefusal: break
                default: XCTFail("dictionary \(dictionary): \(error)")
                }
            }
        }
    }

    /// A packed header is decoded whole into memory: 10 packed bytes may not claim 60 MiB.
    func testAPackedHeaderClaimingFarMoreThanItsBytesIsRefusedBeforeDecoding() throws {
        var header: [UInt8] = [0x17, 0x06] + Self.number(0) + Self.number(1) + [0x09] + Self.number(10) + [0x00]
        header += [0x07, 0x0B] + Self.number(1) + [0x00] + Self.number(1) + [0x21, 0x21, 0x01, 16] + [0x0C] + Self.number(60 << 20) + [0x00, 0x00]
        XCTAssertThrowsError(try SevenZipArchive.read(Self.source(Self.archive(packed: [UInt8](repeating: 0, count: 10), header: header)), limits: .default)) { error in
            guard case ComicError.limitExceeded(_, let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains("claims to unpack to 62914560"), detail)
        }
    }

    func testPackedDataPastTheEndOfTheFileIsRefused() throws {
        let header = Self.folderHeader(coder: [0x01, 0x00], packSize: 1 << 30, unpackSize: 1 << 30, entrySizes: [], names: ["1.jpg"])
        XCTAssertThrowsError(try SevenZipArchive.read(Self.source(Self.archive(packed: [1, 2, 3], header: header)), limits: .default)) { error in
            guard case ComicError.corrupted(_, let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains("past the end of the file"), detail)
        }
    }

    /// Every byte of a real header (plain and packed) flipped three ways, and every truncation,
    /// with its CRC made right again so the parser itself meets the damage: each one ends, and
    /// every page it still lists yields exactly its size or an error.
    func testEveryDamagedHeaderEnds() throws {
        let directory = ArchiveMaker.temporaryDirectory("7z-header-damage")
        defer { try? FileManager.default.removeItem(at: directory) }
        for (index, page) in [ArchiveMaker.noise(count: 3_000, seed: 1), ArchiveMaker.noise(count: 2_000, seed: 2)].enumerated() {
            try Data(page).write(to: directory.appendingPathComponent("\(index + 1).jpg"))
        }
        var outcomes = (opened: 0, refused: 0)
        for switches in [["-mhc=off"], ["-mhc=on"]] {
            let archive = directory.appendingPathComponent("a\(switches[0]).cb7")
            try ArchiveMaker.run("/usr/bin/7z", ["a", "-bd", "-bso0", "-ms=on"] + switches + [archive.path, "1.jpg", "2.jpg"], in: directory)
            let intact = [UInt8](try Data(contentsOf: archive))
            let headerOffset = 32 + Int(intact[12..<20].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            let packed = Array(intact[32..<headerOffset]), header = Array(intact[headerOffset...])
            var variants = (0..<header.count).map { Array(header[..<$0]) }
            for position in header.indices {
                for mask: UInt8 in [0x01, 0x80, 0xFF] {
                    var damaged = header
                    damaged[position] ^= mask
                    variants.append(damaged)
                }
            }
            for variant in variants {
                let bytes = Self.archive(packed: packed, header: variant)
                guard let reader = try? SevenZipComicReader.open(source: Self.source(bytes), limits: .default) else {
                    outcomes.refused += 1
                    continue
                }
                outcomes.opened += 1
                for page in reader.listing.pages {
                    if let read = try? reader.readPage(page) { XCTAssertEqual(Int64(read.count), page.size) }
                }
            }
        }
        XCTAssertGreaterThan(outcomes.refused, 100)
        XCTAssertGreaterThan(outcomes.opened, 10, "no damage the parser survives: did the CRCs go wrong?")
    }

    // MARK: - Writing 7z by hand

    static func source(_ bytes: [UInt8]) -> FileSource { FileSource(bytes: FuzzFindingTests.MemoryBytes(bytes), label: "hostile.cb7") }

    /// Signature header (with both CRCs right), `packed`, then `header` as the next header.
    static func archive(packed: [UInt8], header: [UInt8]) -> [UInt8] {
        let start = le(UInt64(packed.count), 8) + le(UInt64(header.count), 8) + le(UInt64(CRC32.checksum(header)), 4)
        return [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C, 0, 4] + le(UInt64(CRC32.checksum(start)), 4) + start + packed + header
    }

    /// A plain header: one packed stream, one folder of one coder, its entries' sizes (all but
    /// the last, as 7z writes them) and names.
    static func folderHeader(coder: [UInt8], packSize: UInt64, unpackSize: UInt64, entrySizes: [UInt64], names: [String]) -> [UInt8] {
        var header: [UInt8] = [0x01, 0x04, 0x06] + number(0) + number(1) + [0x09] + number(packSize) + [0x00]
        header += [0x07, 0x0B] + number(1) + [0x00] + number(1) + coder + [0x0C] + number(unpackSize) + [0x00]
        header += [0x08, 0x0D] + number(UInt64(entrySizes.count + 1)) + [0x09] + entrySizes.flatMap(number) + [0x00, 0x00]
        let nameBytes: [UInt8] = [0x00] + names.flatMap { ($0 + "\u{0}").utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }
        header += [0x05] + number(UInt64(names.count)) + [0x11] + number(UInt64(nameBytes.count)) + nameBytes + [0x00, 0x00]
        return header
    }

    static func le(_ value: UInt64, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// 7z's variable-length number: as many leading one bits in the first byte as bytes follow.
    static func number(_ value: UInt64) -> [UInt8] {
        for extra in 0..<8 where value < UInt64(1) << (7 * (extra + 1)) {
            let high = UInt8(truncatingIfNeeded: value >> (8 * extra))
            return [UInt8(truncatingIfNeeded: 0xFF00 >> extra) | high] + le(value, extra)
        }
        return [0xFF] + le(value, 8)
    }
}

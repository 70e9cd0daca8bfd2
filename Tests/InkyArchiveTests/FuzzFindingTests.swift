import Foundation
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// Regressions for what the fuzzers (Fuzz/, scripts/dev/fuzz) found in our code.
final class FuzzFindingTests: XCTestCase {
    final class MemoryBytes: RandomAccessBytes {
        let data: [UInt8]
        init(_ data: [UInt8]) { self.data = data }
        var size: Int64 { Int64(data.count) }
        func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
            guard offset < size else { return 0 }
            let piece = min(count, data.count - Int(offset))
            data.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: piece) }
            return piece
        }
    }

    /// FuzzArchive's first finding (LeakSanitizer, 39 bytes of broken ZIP): a reader whose init
    /// threw leaked its 64 KiB read buffer, because deinit does not run for an object whose
    /// stored properties were not all set. A worker listing broken archives all day grew by
    /// 64 KiB each time. Measured by the heap's top (malloc serves 64 KiB from the main arena
    /// on this thread): 400 failed opens would leak 25 MiB.
    func testReadersThatFailToOpenLeakNothing() throws {
        let brokenZip: [UInt8] = [
            0x50, 0x4B, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x0E, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x14,
            0x05, 0x00, 0x5D, 0xFF, 0xFF, 0xFF, 0xFF,
        ]
        let brokenRAR4 = Array("Rar!\u{1A}\u{07}\u{00}".utf8) + [UInt8](repeating: 0xA5, count: 64)
        for broken in [brokenZip, brokenRAR4] {
            XCTAssertThrowsError(try ComicOpener.open(bytes: MemoryBytes(broken), label: "broken")) { error in
                // The parser's words vary by format (libarchive's, our RAR header walk's): the case and the comic are ours.
                guard case ComicError.corrupted(let path, _) = error else { return XCTFail("\(broken.prefix(4)): \(error)") }
                XCTAssertEqual(path, "broken")
            }
            let before = heapTop()
            for _ in 0..<400 { _ = try? ComicOpener.open(bytes: MemoryBytes(broken), label: "broken") }
            let grown = heapTop() - before
            XCTAssertLessThan(grown, 4 << 20, "\(grown) bytes more heap after 400 failed opens of \(broken.prefix(4))")
        }
    }

    /// FuzzArchive's second finding (an abort in libarchive, "archive_read_free invoked with
    /// invalid archive handle"): bytes sniffed as ZIP by a local header past the start, which
    /// libarchive then refuses to open. The failed open freed the handle and deinit freed it
    /// again: a double free that killed the worker for every such file.
    func testAZipThatLibarchiveRefusesToOpenIsAnErrorNotADoubleFree() throws {
        let junk = [UInt8](repeating: 0x20, count: 64) + [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0, count: 40)
        XCTAssertEqual(ArchiveFormat.sniff(junk), .zip, "the premise: sniffed as ZIP")
        for _ in 0..<3 {
            XCTAssertThrowsError(try ComicOpener.open(bytes: MemoryBytes(junk), label: "junk.cbz")) { error in
                guard case ComicError.corrupted(let path, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(path, "junk.cbz")
            }
        }
    }

    /// FuzzArchive's third finding (a Swift arithmetic-overflow trap in RARHeaderScan, which
    /// killed the worker): a RAR5 file header whose extra record declares a size near 2^64.
    func testRAR5ExtraRecordOfAbsurdSizeEndsTheScanInsteadOfTrapping() throws {
        let header: [UInt8] = [0x02, 0x01, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x61] // file "a", 11-byte extra area
            + [UInt8](repeating: 0xFF, count: 9) + [0x01] // record size 2^64 - 1
            + [0x01] // record type 1: encryption
        let archive = Array("Rar!\u{1A}\u{07}\u{01}\u{00}".utf8) + [0, 0, 0, 0, UInt8(header.count)] + header
        let scan = try RARHeaderScan.scanRAR5(size: Int64(archive.count)) { offset, count in
            Array(archive.dropFirst(Int(offset)).prefix(count))
        }
        XCTAssertEqual(scan.encryptedNames, ["a"], "the record read before the absurd size still counts")
        XCTAssertThrowsError(try ComicOpener.open(bytes: MemoryBytes(archive), label: "huge-record.cbr")) { error in
            // Its header's CRC is zeros: a damaged archive, said as such (not a crash, not "encrypted").
            guard case ComicError.corrupted(let path, let detail) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "huge-record.cbr")
            XCTAssertTrue(detail.contains("CRC"), detail)
        }
    }

    /// The same class of bug in the RAR4 walk: a file header whose HIGH_PACK_SIZE makes the
    /// data size Int64.max overflowed `offset + headSize + dataSize`.
    func testRAR4DataSizeNearInt64MaxEndsTheScanInsteadOfTrapping() throws {
        var block: [UInt8] = [0, 0, 0x74, 0x00, 0x81, 36, 0] // file header, flags LONG_BLOCK | LARGE
        block += [0xFF, 0xFF, 0xFF, 0xFF] // PACK_SIZE low
        block += [UInt8](repeating: 0, count: 32 - block.count)
        block += [0xFF, 0xFF, 0xFF, 0x7F] // HIGH_PACK_SIZE
        let archive = Array("Rar!\u{1A}\u{07}\u{00}".utf8) + block + [UInt8](repeating: 0, count: 16)
        let scan = try RARHeaderScan.scanRAR4(size: Int64(archive.count)) { offset, count in
            Array(archive.dropFirst(Int(offset)).prefix(count))
        }
        XCTAssertEqual(scan.fileIsLink, [false], "the header before the jump was read")
    }

    private func heapTop() -> Int { Int(bitPattern: sbrk(0)) }
}

import Foundation
import XCTest
@testable import InkyVault

/// Reads that span chunks fetch them in runs (one `pread` for up to ~16 chunks, with direct
/// I/O where asked and possible): the bytes must be those of the plaintext for any range, each
/// chunk must be decrypted once in a sequential read, and a damaged chunk inside a run must
/// fail every read that touches it, however the run or the one-chunk cache hold its neighbours.
final class VaultReaderChunkRunTests: XCTestCase {
    private let chunk = 65_536

    private func object(_ label: String, chunks: Int, tail: Int) throws -> (path: String, key: SecureBytes, plaintext: [UInt8], directory: TemporaryDirectory) {
        let directory = TemporaryDirectory(label)
        let plaintext = patternBytes(count: chunks * chunk + tail, seed: 11)
        let key = try randomObjectKey()
        let path = directory.child("object")
        _ = try writeObject(plaintext, to: path, key: key, fileID: try randomFileID(), pieceSizes: [1 << 20])
        return (path, key, plaintext, directory)
    }

    func testRangesReadThePlaintextWithAndWithoutDirectReads() throws {
        let (path, key, plaintext, directory) = try object("runs", chunks: 40, tail: 1_234)
        _ = directory
        let ranges: [(Int, Int)] = [(0, plaintext.count), (1_000, 700_000), (chunk - 1, chunk + 2), (3 * chunk, 3 * chunk),
                                    (5 * chunk + 17, 20 * chunk), (plaintext.count - 100_000, 100_000), (123, 1)]
        for direct in [false, true] {
            for (offset, count) in ranges {
                let reader = try VaultObjectReader(path: path, key: key, directReads: direct)
                var pieces: [UInt8] = []
                var bytes = [UInt8](repeating: 0, count: count)
                let got = try bytes.withUnsafeMutableBytes { buffer in
                    try reader.read(at: UInt64(offset), into: buffer) { piece in
                        XCTAssertLessThanOrEqual(piece.count, self.chunk, "one chunk's bytes at a time")
                        pieces += piece
                    }
                }
                XCTAssertEqual(got, count)
                XCTAssertEqual(bytes, Array(plaintext[offset..<(offset + count)]), "direct \(direct): \(count) bytes at \(offset)")
                XCTAssertEqual(pieces, bytes, "the authenticated pieces, in order, are the answer")
                XCTAssertEqual(reader.readsDirectly, direct && Self.directIOWorks(in: directory.path), "direct reads where asked and possible")
            }
        }
    }

    /// Whether this folder's file system takes O_DIRECT (tmpfs did not before Linux 6.6).
    private static func directIOWorks(in folder: String) -> Bool {
        let path = folder + "/probe"
        FileManager.default.createFile(atPath: path, contents: Data(count: 8192))
        defer { unlink(path) }
        guard let flag = SealedChunkRun.directFlag else { return false }
        let fd = open(path, O_RDONLY | flag)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 4096)
        defer { buffer.deallocate() }
        return pread(fd, buffer, 4096, 0) == 4096
    }

    func testASequentialReadInLargeStepsDecryptsEachChunkOnce() throws {
        let (path, key, plaintext, directory) = try object("runs-once", chunks: 40, tail: 999)
        _ = directory
        for step in [700_001, 1 << 20, 3 << 20] {
            let reader = try VaultObjectReader(path: path, key: key, directReads: true)
            let opened = reader.chunksDecrypted
            XCTAssertEqual(try readAll(reader, step: step), plaintext, "step \(step)")
            XCTAssertEqual(reader.chunksDecrypted - opened, 41 - 1, "step \(step): chunk 0 from open's cache, the other 40 once each")
        }
    }

    func testADamagedChunkFailsEveryReadTouchingItWhateverTheRunHolds() throws {
        let (path, key, plaintext, directory) = try object("runs-damaged", chunks: 12, tail: 5_000)
        _ = directory
        let layout = try XCTUnwrap(VaultChunkLayout(plaintextSize: UInt64(plaintext.count), chunkSize: chunk))
        var stored = try readBytes(path)
        stored[Int(layout.storedOffset(ofChunk: 5)) + 12 + 40_000] ^= 0x04   // chunk 5's ciphertext
        try writeBytes(stored, to: path)
        for direct in [false, true] {
            let reader = try VaultObjectReader(path: path, key: key, directReads: direct)
            func fails(_ offset: Int, _ count: Int, _ label: String) {
                var buffer = [UInt8](repeating: 0xAA, count: count)
                XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try reader.read(at: UInt64(offset), into: $0) }, label) { error in
                    guard case VaultError.objectNotAuthentic(_, let index) = error else { return XCTFail("\(label): \(error)") }
                    XCTAssertEqual(index, 5, label)
                }
                // Wiped where it was written, untouched after: no byte of any chunk is left.
                XCTAssertFalse(buffer.contains { $0 != 0 && $0 != 0xAA }, "\(label): nothing of the answer is left (direct \(direct))")
            }
            // A run of chunks 3-8 loaded by a read that ends inside chunk 5's neighbour: the
            // damaged chunk inside it fails the read.
            fails(3 * chunk + 100, 5 * chunk, "a read across a run holding the damage")
            // Chunk 4 (good) is now the cached one and the run still holds chunk 5: a read
            // straddling their boundary must not pass chunk 4's bytes and then stop quietly.
            XCTAssertEqual(try reader.read(at: UInt64(4 * chunk + 10), count: 100), Array(plaintext[(4 * chunk + 10)..<(4 * chunk + 110)]))
            fails(5 * chunk - 3_000, 6_000, "a read straddling chunks 4 and 5")
            fails(5 * chunk + 1, 10, "a read inside chunk 5")
            fails(6 * chunk - 1, 2, "a read straddling chunks 5 and 6")
            // Everything around the damage still reads.
            XCTAssertEqual(try reader.read(at: 0, count: 5 * chunk), Array(plaintext[0..<(5 * chunk)]))
            XCTAssertEqual(try reader.read(at: UInt64(6 * chunk), count: plaintext.count), Array(plaintext[(6 * chunk)...]))
        }
    }
}

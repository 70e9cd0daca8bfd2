import Foundation
import XCTest
@testable import InkyVault

/// Reads that cover chunks whole decrypt them straight into the caller's buffer, through one
/// GCM context per reader: the bytes must be the same as through the cache, a damaged chunk
/// must still wipe the whole answer, and the context must recover for the next chunk.
final class VaultReaderWholeChunkTests: XCTestCase {
    func testLargeUnalignedReadsMatchThePlaintextAndDecryptEachChunkOnce() throws {
        let directory = TemporaryDirectory("whole-chunks")
        let size = 9 * 65_536 + 777
        let plaintext = patternBytes(count: size, seed: 7)
        let key = try randomObjectKey()
        let path = directory.child("object")
        _ = try writeObject(plaintext, to: path, key: key, fileID: try randomFileID())
        for step in [256 << 10, 65_536, 100_000, 1 << 20] {
            let reader = try VaultObjectReader(path: path, key: key)
            let opened = reader.chunksDecrypted
            // Start off a chunk boundary, as libarchive does after a member's local header.
            XCTAssertEqual(try reader.read(at: 0, count: 1000), Array(plaintext[0..<1000]))
            XCTAssertEqual(try readAll(reader, from: 1000, step: step), Array(plaintext[1000...]), "step \(step)")
            XCTAssertEqual(reader.chunksDecrypted - opened, 10 - 1, "step \(step): chunk 0 from open's cache, the other 9 once each")
        }
    }

    func testADamagedChunkInsideALargeReadWipesItAndLaterChunksStillRead() throws {
        let directory = TemporaryDirectory("whole-chunks-damaged")
        let size = 6 * 65_536
        let plaintext = patternBytes(count: size, seed: 8)
        let key = try randomObjectKey()
        let path = directory.child("object")
        _ = try writeObject(plaintext, to: path, key: key, fileID: try randomFileID())
        let layout = try XCTUnwrap(VaultChunkLayout(plaintextSize: UInt64(size), chunkSize: 65_536))
        // One ciphertext byte of chunk 2 flipped.
        let damaged = Int(layout.storedOffset(ofChunk: 2)) + 12 + 500
        var bytes = try readBytes(path)
        bytes[damaged] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let reader = try VaultObjectReader(path: path, key: key)
        var buffer = [UInt8](repeating: 0xAA, count: 4 * 65_536)
        XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try reader.read(at: 65_536, into: $0) }) { error in
            guard case VaultError.objectNotAuthentic(_, let chunk) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(chunk, 2)
        }
        XCTAssertEqual(Array(buffer[0..<(2 * 65_536)]), [UInt8](repeating: 0, count: 2 * 65_536),
                       "chunk 1 (good, already written) and the damaged chunk 2 are wiped")
        // The shared context starts clean for every chunk: the chunks after the damage read.
        XCTAssertEqual(try reader.read(at: 3 * 65_536, count: 3 * 65_536), Array(plaintext[(3 * 65_536)...]))
        XCTAssertEqual(try reader.read(at: 0, count: 2 * 65_536), Array(plaintext[0..<(2 * 65_536)]))
    }
}

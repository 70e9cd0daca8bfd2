import Foundation
import XCTest
@testable import InkyVault

/// libarchive reads in small pieces; the reader must decrypt each chunk once for sequential
/// reads, not once per read (speed itself is the benchmark's business, not a test's).
final class VaultReaderChunkCacheTests: XCTestCase {
    func testSequentialSmallReadsDecryptEachChunkOnce() throws {
        let directory = TemporaryDirectory("chunk-cache")
        let size = 5 * 65_536 + 123
        let plaintext = try RandomBytes.bytes(count: size)
        let key = try randomObjectKey()
        let path = directory.child("object")
        try writeObject(plaintext, to: path, key: key, fileID: try randomFileID(), pieceSizes: [1 << 20])
        let reader = try VaultObjectReader(path: path, key: key)
        let opened = reader.chunksDecrypted // chunk 0 is checked at open
        var buffer = [UInt8](repeating: 0, count: 4096)
        var read: [UInt8] = []
        var offset: UInt64 = 0
        try buffer.withUnsafeMutableBytes { buffer in
            while offset < reader.size {
                let got = try reader.read(at: offset, into: buffer)
                read += buffer[0..<got]
                offset += UInt64(got)
            }
        }
        XCTAssertEqual(read, plaintext)
        XCTAssertEqual(reader.chunksDecrypted - opened, 6 - (opened > 0 ? 1 : 0), "6 chunks, each decrypted once")
    }
}

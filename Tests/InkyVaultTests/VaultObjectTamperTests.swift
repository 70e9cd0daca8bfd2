import Foundation
import XCTest
@testable import InkyVault

/// One bit flipped at a time, everywhere in the file: every flip must be refused, and no
/// plaintext of the damaged chunk may come out.
final class VaultObjectTamperTests: XCTestCase {
    func testEveryByteOfEveryListedObjectSize() throws {
        // Literally every byte position of the file, header and all, for each size the
        // format's edge cases sit at: empty, one byte, one short of, exactly, one over a chunk,
        // and several chunks with a short last one.
        for size in [0, 1, 65_535, 65_536, 65_537] {
            try checkFlips(size: size) { layout in Array(0..<Int(layout.fileSize)) }
        }
        // Several chunks with a short last one: every byte of the header and the first two chunks
        // (one past the chunk the open authenticates); of the later ones, which are read by the
        // same code, their first and last 64 bytes (nonce, boundaries, tag) and every 61st byte
        // (each flip opens the object again: every byte of all four took 40 s of a debug run).
        try checkFlips(size: 3 * 65_536 + 5) { layout in
            let chunk = 65_536 + 28, everyByte = VaultChunkLayout.headerLength + 2 * chunk
            let file = Int(layout.fileSize)
            var positions = Set(0..<min(file, everyByte))
            for start in stride(from: everyByte, to: file, by: chunk) {
                let end = min(file, start + chunk)
                positions.formUnion(start..<min(end, start + 64))
                positions.formUnion(max(start, end - 64)..<end)
                positions.formUnion(stride(from: start, to: end, by: 61))
            }
            return positions.sorted()
        }
    }

    private func checkFlips(size: Int, positions: (VaultChunkLayout) -> [Int]) throws {
        let directory = TemporaryDirectory("tamper")
        let plaintext = patternBytes(count: size, seed: 99)
        let key = try randomObjectKey()
        let path = directory.child("object")
        try writeObject(plaintext, to: path, key: key, fileID: try randomFileID())
        // Every byte of the padded stream too: padding and the size trailer are authenticated alike.
        let layout = VaultChunkLayout(plaintextSize: VaultPadding.objectStreamSize(contentSize: UInt64(size)), chunkSize: 65_536)!
        let original = try readBytes(path)
        XCTAssertEqual(original.count, Int(layout.fileSize))
        let file = open(path, O_RDWR)
        XCTAssertGreaterThanOrEqual(file, 0)
        defer { close(file) }
        var rejected = 0
        let chosen = positions(layout)
        for position in chosen {
            let bit = UInt8(1) << UInt8(position % 8)
            writeByte(original[position] ^ bit, at: position, to: file)
            if checkRejected(position: position, size: size, path: path, key: key, layout: layout, plaintext: plaintext) {
                rejected += 1
            }
            writeByte(original[position], at: position, to: file)
        }
        XCTAssertEqual(rejected, chosen.count, "size \(size): every flip refused")
        XCTAssertEqual(try readAll(try VaultObjectReader(path: path, key: key)), plaintext, "restored file reads again")
    }

    private func writeByte(_ value: UInt8, at position: Int, to file: Int32) {
        var byte = value
        XCTAssertEqual(pwrite(file, &byte, 1, off_t(position)), 1)
    }

    /// True if the damaged object at `path` was refused as it must be.
    private func checkRejected(
        position: Int, size: Int, path: String, key: SecureBytes, layout: VaultChunkLayout, plaintext: [UInt8]
    ) -> Bool {
        let chunk: UInt64? = position < VaultChunkLayout.headerLength ? nil
            : UInt64(position - VaultChunkLayout.headerLength) / UInt64(65_536 + 28)
        let reader: VaultObjectReader
        do {
            reader = try VaultObjectReader(path: path, key: key)
        } catch {
            XCTAssertTrue(error.isObjectRejection, "size \(size) byte \(position): \(error)")
            return error.isObjectRejection
        }
        // Open authenticates the header and chunk 0, so only a later chunk can get here.
        guard let chunk, chunk > 0 else {
            XCTFail("size \(size): flipped byte \(position) (header or chunk 0) was accepted at open")
            return false
        }
        XCTAssertEqual(reader.size, UInt64(size))
        let range = layout.plaintextRange(ofChunk: chunk)
        var refused = false
        do {
            _ = try reader.read(at: range.lowerBound, count: 1)
            XCTFail("size \(size) byte \(position): damaged chunk \(chunk) was served")
        } catch {
            XCTAssertEqual(error, .objectNotAuthentic(path: path, chunk: chunk))
            refused = error == .objectNotAuthentic(path: path, chunk: chunk)
        }
        // A whole-object read into a caller's buffer: it throws, the bad chunk (decrypted in
        // place, since the read covers it whole) was wiped before the error came back, and the
        // good bytes written before it were wiped too.
        var buffer = [UInt8](repeating: 0xEE, count: size)
        XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try reader.read(at: 0, into: $0) }) {
            XCTAssertEqual($0 as? VaultError, .objectNotAuthentic(path: path, chunk: chunk), "size \(size) byte \(position)")
        }
        let bad = Int(range.lowerBound)..<Int(range.upperBound)
        // (Data comparison is a memcmp; a per-byte closure is slow in a debug build.)
        XCTAssertEqual(Data(buffer[bad]), Data(count: bad.count),
                       "no plaintext of the bad chunk, wiped (byte \(position))")
        XCTAssertEqual(Data(buffer[..<bad.lowerBound]), Data(count: bad.lowerBound),
                       "earlier good bytes wiped (byte \(position))")
        // Chunks that were not touched still serve authentic plaintext.
        XCTAssertEqual(try reader.read(at: 0, count: 100), Array(plaintext.prefix(100)))
        return refused
    }
}

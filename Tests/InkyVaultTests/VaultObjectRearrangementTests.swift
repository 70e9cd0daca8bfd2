import Foundation
import XCTest
@testable import InkyVault

/// Whole chunks and headers moved, copied, cut off or added: things an attacker with
/// write access (but no key) can do without flipping a single bit inside a chunk.
final class VaultObjectRearrangementTests: XCTestCase {
    private let size = 3 * 65_536 + 5  // four chunks, the last one 5 bytes
    private let layout = VaultChunkLayout(plaintextSize: 3 * 65_536 + 5, chunkSize: 65_536)!
    private var directory: TemporaryDirectory!

    override func setUp() { directory = TemporaryDirectory("rearrange") }
    override func tearDown() { directory = nil }

    private func storedChunk(_ file: [UInt8], _ index: UInt64, _ layout: VaultChunkLayout? = nil) -> [UInt8] {
        let layout = layout ?? self.layout
        let start = Int(layout.storedOffset(ofChunk: index))
        return Array(file[start..<start + layout.storedLength(ofChunk: index)])
    }

    private func replacingChunk(_ file: [UInt8], _ index: UInt64, with chunk: [UInt8]) -> [UInt8] {
        let start = Int(layout.storedOffset(ofChunk: index))
        var result = file
        result.replaceSubrange(start..<start + layout.storedLength(ofChunk: index), with: chunk)
        return result
    }

    /// Asserts the object at `path` is refused: at open, or when the chunk `badChunk` is read.
    private func assertRefused(_ path: String, key: SecureBytes, badChunk: UInt64? = nil, _ what: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        do {
            let reader = try VaultObjectReader(path: path, key: key)
            guard let badChunk, badChunk > 0 else {
                return XCTFail("\(what): accepted at open", file: file, line: line)
            }
            let range = reader.layout.plaintextRange(ofChunk: badChunk)
            XCTAssertThrowsError(try reader.read(at: range.lowerBound, count: range.count), what, file: file, line: line) {
                XCTAssertEqual($0 as? VaultError, .objectNotAuthentic(path: path, chunk: badChunk), what,
                               file: file, line: line)
            }
            XCTAssertThrowsError(try readAll(reader), what, file: file, line: line) {
                XCTAssertEqual($0 as? VaultError, .objectNotAuthentic(path: path, chunk: badChunk), what, file: file, line: line)
            }
        } catch {
            XCTAssertTrue(error.isObjectRejection, "\(what): \(error)", file: file, line: line)
        }
    }

    private func makeObject(_ name: String, key: SecureBytes, fileID: VaultFileID? = nil, seed: UInt64 = 1,
                            size: Int? = nil) throws -> (path: String, bytes: [UInt8]) {
        let path = directory.child(name)
        try writeObject(patternBytes(count: size ?? self.size, seed: seed), to: path, key: key,
                        fileID: try fileID ?? randomFileID())
        return (path, try readBytes(path))
    }

    func testSwappedAndDuplicatedChunksWithinAnObject() throws {
        let key = try randomObjectKey()
        let (path, original) = try makeObject("a", key: key)
        let c0 = storedChunk(original, 0), c1 = storedChunk(original, 1), c2 = storedChunk(original, 2)

        try writeBytes(replacingChunk(replacingChunk(original, 0, with: c1), 1, with: c0), to: path)
        assertRefused(path, key: key, "chunks 0 and 1 swapped")

        try writeBytes(replacingChunk(replacingChunk(original, 1, with: c2), 2, with: c1), to: path)
        assertRefused(path, key: key, badChunk: 1, "chunks 1 and 2 swapped")

        try writeBytes(replacingChunk(original, 2, with: c1), to: path)
        assertRefused(path, key: key, badChunk: 2, "chunk 1 duplicated over chunk 2")

        try writeBytes(original, to: path)
        XCTAssertEqual(try readAll(try VaultObjectReader(path: path, key: key)), patternBytes(count: size, seed: 1))
    }

    func testChunksMovedAcrossObjectsUnderTheSameKeyAndUnderDifferentKeys() throws {
        let sharedKey = try randomObjectKey()
        // Same key, different file ids: only the header in the AAD tells them apart.
        let (a, aBytes) = try makeObject("a", key: sharedKey, seed: 1)
        let (_, bBytes) = try makeObject("b", key: sharedKey, seed: 2)
        let otherKey = try randomObjectKey()
        let (_, cBytes) = try makeObject("c", key: otherKey, seed: 3)
        for (donor, label) in [(bBytes, "same key"), (cBytes, "different key")] {
            for index in UInt64(0)..<layout.chunkCount {
                try writeBytes(replacingChunk(aBytes, index, with: storedChunk(donor, index)), to: a)
                assertRefused(a, key: sharedKey, badChunk: index, "\(label): chunk \(index) from another object")
            }
        }
    }

    func testHeadersSwappedBetweenObjects() throws {
        let sharedKey = try randomObjectKey()
        let (a, aBytes) = try makeObject("a", key: sharedKey, seed: 1)
        let (b, bBytes) = try makeObject("b", key: sharedKey, seed: 2)
        let header = VaultChunkLayout.headerLength
        // Same size, so the file-size check passes and only authentication can notice.
        try writeBytes(Array(bBytes[..<header]) + aBytes[header...], to: a)
        assertRefused(a, key: sharedKey, "b's header on a's chunks (same key)")
        try writeBytes(Array(aBytes[..<header]) + bBytes[header...], to: b)
        assertRefused(b, key: sharedKey, "a's header on b's chunks (same key)")
        // With b's header, a reader keyed for b still refuses a's chunks.
        let otherKey = try randomObjectKey()
        let (c, cBytes) = try makeObject("c", key: otherKey, seed: 3)
        try writeBytes(Array(cBytes[..<header]) + aBytes[header...], to: c)
        assertRefused(c, key: otherKey, "c's header on a's chunks (different keys)")
        assertRefused(c, key: sharedKey, "c's header on a's chunks, read with a's key")
    }

    func testTruncationAtEveryChunkBoundaryAndAtRandomPoints() throws {
        let key = try randomObjectKey()
        let (path, original) = try makeObject("a", key: key)
        var cuts = Set((0..<layout.chunkCount).map { Int(layout.storedOffset(ofChunk: $0)) })
        cuts.formUnion([0, 1, VaultChunkLayout.headerLength - 1, VaultChunkLayout.headerLength, original.count - 1,
                        original.count - 16, original.count - 17])
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<40 { cuts.insert(Int.random(in: 0..<original.count, using: &generator)) }
        for cut in cuts.sorted() {
            try writeBytes(Array(original[..<cut]), to: path)
            assertRefused(path, key: key, "truncated to \(cut) bytes")
        }
    }

    func testTruncationToWholeChunksWithTheSizeFieldRewritten() throws {
        // The attacker also fixes the header's size so the file-size check passes: now the
        // header no longer matches the AAD the chunks were sealed with.
        let key = try randomObjectKey()
        let (path, original) = try makeObject("a", key: key)
        for kept in UInt64(1)..<layout.chunkCount {
            var bytes = Array(original[..<Int(layout.storedOffset(ofChunk: kept))])
            let newSize = kept * 65_536
            withUnsafeBytes(of: newSize.bigEndian) { bytes.replaceSubrange(48..<56, with: $0) }
            try writeBytes(bytes, to: path)
            assertRefused(path, key: key, "cut to \(kept) chunks, size field rewritten")
        }
        // An empty object cut to just its header: no empty final chunk, refused.
        let (empty, emptyBytes) = try makeObject("empty", key: key, size: 0)
        try writeBytes(Array(emptyBytes[..<VaultChunkLayout.headerLength]), to: empty)
        assertRefused(empty, key: key, "empty object without its final chunk")
    }

    func testAppendedChunkOrBytes() throws {
        let key = try randomObjectKey()
        // A whole number of full chunks, so an appended full chunk looks plausible.
        let (path, original) = try makeObject("a", key: key, size: 2 * 65_536)
        let twoChunks = VaultChunkLayout(plaintextSize: 2 * 65_536, chunkSize: 65_536)!
        let last = storedChunk(original, 1, twoChunks)
        try writeBytes(original + last, to: path)
        assertRefused(path, key: key, "last chunk appended again")
        try writeBytes(original + storedChunk(original, 0, twoChunks), to: path)
        assertRefused(path, key: key, "first chunk appended")
        try writeBytes(original + [0], to: path)
        assertRefused(path, key: key, "one byte appended")
        // With the size field raised to match: the header changed, so every chunk fails.
        var bytes = original + last
        withUnsafeBytes(of: UInt64(3 * 65_536).bigEndian) { bytes.replaceSubrange(48..<56, with: $0) }
        try writeBytes(bytes, to: path)
        assertRefused(path, key: key, "chunk appended and size field raised")
    }
}

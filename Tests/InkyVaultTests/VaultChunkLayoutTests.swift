import XCTest
@testable import InkyVault

/// The offset arithmetic on its own: no files, no keys.
final class VaultChunkLayoutTests: XCTestCase {
    private let chunk = 65_536
    private let sizes: [UInt64] = [0, 1, 2, 4095, 65_535, 65_536, 65_537, 131_071, 131_072, 131_073, 3 * 65_536 + 5,
                                   10 * 65_536, 1 << 32, (1 << 40) + 17]

    func testChunkCountAndFileSizeByHand() {
        func layout(_ size: UInt64) -> VaultChunkLayout { VaultChunkLayout(plaintextSize: size, chunkSize: chunk)! }
        // 56-byte header, 28 bytes (nonce + tag) per chunk.
        XCTAssertEqual(layout(0).chunkCount, 1)           // the empty object still has one (empty) chunk
        XCTAssertEqual(layout(0).fileSize, 56 + 28)
        XCTAssertEqual(layout(1).chunkCount, 1)
        XCTAssertEqual(layout(1).fileSize, 56 + 28 + 1)
        XCTAssertEqual(layout(65_535).fileSize, 56 + 28 + 65_535)
        XCTAssertEqual(layout(65_536).chunkCount, 1)
        XCTAssertEqual(layout(65_536).fileSize, 56 + 28 + 65_536)
        XCTAssertEqual(layout(65_537).chunkCount, 2)
        XCTAssertEqual(layout(65_537).fileSize, 65_649)  // 56 + 2 × 28 + 65,537
        let threeAndABit = layout(196_613)  // 3 × 65,536 + 5
        XCTAssertEqual(threeAndABit.chunkCount, 4)
        XCTAssertEqual(threeAndABit.fileSize, 196_781)  // 56 + 4 × 28 + 196,613
        XCTAssertEqual(threeAndABit.plaintextLength(ofChunk: 3), 5)
        XCTAssertEqual(threeAndABit.storedOffset(ofChunk: 3), 196_748)  // 56 + 3 × 65,564
        XCTAssertEqual(threeAndABit.storedLength(ofChunk: 3), 33)
        XCTAssertEqual(layout(65_536).plaintextLength(ofChunk: 0), 65_536)
        XCTAssertEqual(layout(0).plaintextLength(ofChunk: 0), 0)
    }

    func testChunksTileThePlaintextAndTheFileExactly() {
        for size in sizes {
            let layout = VaultChunkLayout(plaintextSize: size, chunkSize: chunk)!
            var plaintextEnd: UInt64 = 0
            var storedEnd = UInt64(VaultChunkLayout.headerLength)
            // Huge sizes: check the first, last and a middle chunk instead of all of them.
            let indices: [UInt64] = layout.chunkCount <= 64
                ? Array(0..<layout.chunkCount) : [0, 1, layout.chunkCount / 2, layout.chunkCount - 1]
            for index in indices {
                let range = layout.plaintextRange(ofChunk: index)
                if layout.chunkCount <= 64 {
                    XCTAssertEqual(range.lowerBound, plaintextEnd, "size \(size) chunk \(index)")
                    XCTAssertEqual(layout.storedOffset(ofChunk: index), storedEnd, "size \(size) chunk \(index)")
                }
                XCTAssertEqual(range.lowerBound, index * UInt64(chunk))
                XCTAssertEqual(layout.storedLength(ofChunk: index), range.count + 28)
                XCTAssertEqual(layout.isLastChunk(index), index == layout.chunkCount - 1)
                if !layout.isLastChunk(index) { XCTAssertEqual(range.count, chunk, "only the last chunk may be short") }
                if size > 0 { XCTAssertGreaterThan(range.count, 0, "only the empty object has an empty chunk") }
                plaintextEnd = range.upperBound
                storedEnd = layout.storedOffset(ofChunk: index) + UInt64(layout.storedLength(ofChunk: index))
            }
            XCTAssertEqual(plaintextEnd, size, "chunks end at the plaintext size (\(size))")
            XCTAssertEqual(storedEnd, layout.fileSize, "the last chunk ends the file (\(size))")
        }
    }

    func testOffsetToChunkAndCoveringRanges() {
        let layout = VaultChunkLayout(plaintextSize: 3 * 65_536 + 5, chunkSize: chunk)!
        XCTAssertEqual(layout.chunkIndex(containing: 0), 0)
        XCTAssertEqual(layout.chunkIndex(containing: 65_535), 0)
        XCTAssertEqual(layout.chunkIndex(containing: 65_536), 1)
        XCTAssertEqual(layout.chunkIndex(containing: 3 * 65_536 + 4), 3)
        XCTAssertEqual(layout.chunks(coveringOffset: 0, count: 1), 0..<1)
        XCTAssertEqual(layout.chunks(coveringOffset: 0, count: 65_536), 0..<1)
        XCTAssertEqual(layout.chunks(coveringOffset: 0, count: 65_537), 0..<2)
        XCTAssertEqual(layout.chunks(coveringOffset: 65_535, count: 2), 0..<2)
        XCTAssertEqual(layout.chunks(coveringOffset: 65_536, count: 4096), 1..<2)
        XCTAssertEqual(layout.chunks(coveringOffset: 100, count: Int.max), 0..<4, "clamped to the end")
        XCTAssertEqual(layout.chunks(coveringOffset: 3 * 65_536 + 4, count: 100), 3..<4)
        XCTAssertEqual(layout.chunks(coveringOffset: 3 * 65_536 + 5, count: 100), 0..<0, "at the end: nothing")
        XCTAssertEqual(layout.chunks(coveringOffset: 1 << 50, count: 100), 0..<0)
        XCTAssertEqual(layout.chunks(coveringOffset: 10, count: 0), 0..<0)
        let empty = VaultChunkLayout(plaintextSize: 0, chunkSize: chunk)!
        XCTAssertEqual(empty.chunks(coveringOffset: 0, count: 4096), 0..<0)
    }

    func testCoveringRangesAgainstBruteForceOnASmallChunkSize() {
        // A 16-byte chunk size makes every boundary case reachable by brute force.
        for size in UInt64(0)...70 {
            let layout = VaultChunkLayout(plaintextSize: size, chunkSize: 16)!
            for offset in UInt64(0)...75 {
                for count in 0...40 {
                    let end = min(offset + UInt64(count), size)
                    let expected = offset < end
                        ? Set((offset..<end).map { $0 / 16 }) : Set<UInt64>()
                    XCTAssertEqual(Set(layout.chunks(coveringOffset: offset, count: count)), expected,
                                   "size \(size) offset \(offset) count \(count)")
                }
            }
        }
    }

    func testFileSizeInvertsToPlaintextSize() {
        for size in sizes {
            let layout = VaultChunkLayout(plaintextSize: size, chunkSize: chunk)!
            XCTAssertEqual(VaultChunkLayout.plaintextSize(forFileSize: layout.fileSize, chunkSize: chunk), size)
        }
        // File sizes no plaintext produces: shorter than header + one chunk's overhead, or a
        // last chunk with overhead but no data (only the empty object has an empty chunk).
        for impossible: UInt64 in [0, 55, 56, 83, 56 + 65_564 + 28, 56 + 65_564 + 1] {
            XCTAssertNil(VaultChunkLayout.plaintextSize(forFileSize: impossible, chunkSize: chunk), "\(impossible)")
        }
        // Exhaustive on a small chunk size: every file size maps back iff some plaintext maps to it.
        let forward = Dictionary(uniqueKeysWithValues: (UInt64(0)...200).map {
            (VaultChunkLayout(plaintextSize: $0, chunkSize: 16)!.fileSize, $0)
        })
        for fileSize in UInt64(0)...(forward.keys.max()!) {
            XCTAssertEqual(VaultChunkLayout.plaintextSize(forFileSize: fileSize, chunkSize: 16), forward[fileSize],
                           "file size \(fileSize)")
        }
    }

    func testHostileSizesDoNotOverflow() {
        XCTAssertNil(VaultChunkLayout(plaintextSize: .max, chunkSize: chunk))
        XCTAssertNil(VaultChunkLayout(plaintextSize: UInt64(Int64.max), chunkSize: chunk))
        XCTAssertNil(VaultChunkLayout(plaintextSize: 1, chunkSize: 0))
        XCTAssertNotNil(VaultChunkLayout(plaintextSize: UInt64(Int64.max) / 2, chunkSize: chunk))
    }
}

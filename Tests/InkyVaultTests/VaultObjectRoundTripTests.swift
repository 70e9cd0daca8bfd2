import XCTest
import InkyCore
@testable import InkyVault

final class VaultObjectRoundTripTests: XCTestCase {
    static let sizes = [0, 1, 65_535, 65_536, 65_537, 3 * 65_536 + 5]

    func testRoundTripOfEverySizeWithRandomAccessReads() throws {
        let directory = TemporaryDirectory("roundtrip")
        var generator = SystemRandomNumberGenerator()
        for size in Self.sizes {
            let plaintext = patternBytes(count: size, seed: UInt64(size))
            let key = try randomObjectKey()
            let fileID = try randomFileID()
            let path = directory.child("object-\(size)")
            let header = try writeObject(plaintext, to: path, key: key, fileID: fileID)
            let layout = VaultChunkLayout(plaintextSize: VaultPadding.objectStreamSize(contentSize: UInt64(size)), chunkSize: 65_536)!
            XCTAssertEqual(try readBytes(path).count, Int(layout.fileSize), "file size for \(size): padded")
            XCTAssertEqual(try VaultObjectHeader.read(path: path), header)

            let reader = try VaultObjectReader(path: path, key: key)
            XCTAssertEqual(reader.size, UInt64(size))
            XCTAssertEqual(reader.header.fileID, fileID)
            XCTAssertEqual(try readAll(reader), plaintext, "sequential 4 KiB reads of \(size)")
            XCTAssertEqual(try reader.read(at: 0, count: size + 100), plaintext, "one big read of \(size)")
            XCTAssertEqual(try reader.read(at: UInt64(size), count: 10), [], "at the end")
            XCTAssertEqual(try reader.read(at: UInt64(size) + 1_000_000, count: 10), [], "beyond the end")
            for _ in 0..<200 where size > 0 {
                let offset = Int.random(in: 0..<size, using: &generator)
                let count = Int.random(in: 0...70_000, using: &generator)
                let expected = Array(plaintext[offset..<min(size, offset + count)])
                XCTAssertEqual(try reader.read(at: UInt64(offset), count: count), expected,
                               "size \(size) offset \(offset) count \(count)")
            }
            // Reads that straddle each chunk boundary.
            for boundary in stride(from: 65_536, to: size, by: 65_536) {
                XCTAssertEqual(try reader.read(at: UInt64(boundary - 3), count: 6),
                               Array(plaintext[(boundary - 3)..<min(size, boundary + 3)]))
            }
        }
    }

    func testPointerReadFillsTheBufferAndReportsTheCount() throws {
        let directory = TemporaryDirectory("pointer")
        let plaintext = patternBytes(count: 100_000)
        let key = try randomObjectKey()
        try writeObject(plaintext, to: directory.child("o"), key: key, fileID: try randomFileID())
        let reader = try VaultObjectReader(path: directory.child("o"), key: key)
        var buffer = [UInt8](repeating: 0xEE, count: 10_000)
        let count = try buffer.withUnsafeMutableBytes { try reader.read(at: 95_000, into: $0) }
        XCTAssertEqual(count, 5_000)
        XCTAssertEqual(Array(buffer[0..<5_000]), Array(plaintext[95_000...]))
    }

    func testWriterAcceptsAnyChunkingOfTheInput() throws {
        let directory = TemporaryDirectory("chunking")
        let plaintext = patternBytes(count: 3 * 65_536 + 5)
        let key = try randomObjectKey()
        for (index, pieces) in [[1], [65_536], [65_535, 2], [196_613], [13, 65_536 * 2, 3]].enumerated() {
            let path = directory.child("o\(index)")
            try writeObject(plaintext, to: path, key: key, fileID: try randomFileID(), pieceSizes: pieces)
            XCTAssertEqual(try readAll(try VaultObjectReader(path: path, key: key)), plaintext, "pieces \(pieces)")
        }
    }

    func testWriterRefusesTheWrongAmountAndLeavesNoFile() throws {
        let directory = TemporaryDirectory("writer-size")
        let key = try randomObjectKey()
        let short = try VaultObjectWriter(path: directory.child("short"), key: key, fileID: try randomFileID(),
                                          plaintextSize: 10)
        try short.write([1, 2, 3])
        XCTAssertThrowsError(try short.finish()) {
            XCTAssertEqual($0 as? VaultError, .plaintextSizeMismatch(expected: 10, actual: 3))
        }
        let long = try VaultObjectWriter(path: directory.child("long"), key: key, fileID: try randomFileID(),
                                         plaintextSize: 2)
        XCTAssertThrowsError(try long.write([1, 2, 3])) {
            XCTAssertEqual($0 as? VaultError, .plaintextSizeMismatch(expected: 2, actual: 3))
        }
        func startAndDrop() throws {
            let dropped = try VaultObjectWriter(path: directory.child("dropped"), key: key,
                                                fileID: try randomFileID(), plaintextSize: 1)
            try dropped.write([9])
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).count, 1,
                           "only the dropped writer's temporary file exists while it lives")
        }
        try startAndDrop()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [],
                       "neither final names nor temporary files of failed or dropped writers remain")
    }

    func testTemporaryFileUntilFinishAndNoOverwrite() throws {
        let directory = TemporaryDirectory("publish")
        let key = try randomObjectKey()
        let path = directory.child("object")
        let writer = try VaultObjectWriter(path: path, key: key, fileID: try randomFileID(), plaintextSize: 3)
        try writer.write([1, 2, 3])
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the final name appears only at finish")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).count, 1)
        try writer.finish()
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["object"])

        let again = try VaultObjectWriter(path: path, key: key, fileID: try randomFileID(), plaintextSize: 1)
        try again.write([7])
        XCTAssertThrowsError(try again.finish(), "objects are write-once") {
            // Published with link(2), which never replaces a name: EEXIST, where rename would have overwritten.
            XCTAssertEqual($0 as? VaultError, .io(path: path, operation: "link", errno: Errno(EEXIST)))
        }
        XCTAssertEqual(try readAll(try VaultObjectReader(path: path, key: key)), [1, 2, 3], "the original is intact")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["object"])
    }

    func testSameInputEncryptsDifferentlyEachTime() throws {
        let directory = TemporaryDirectory("nonces")
        let key = try randomObjectKey()
        let fileID = try randomFileID()
        let plaintext = patternBytes(count: 1_000)
        try writeObject(plaintext, to: directory.child("a"), key: key, fileID: fileID)
        try writeObject(plaintext, to: directory.child("b"), key: key, fileID: fileID)
        XCTAssertNotEqual(try readBytes(directory.child("a")), try readBytes(directory.child("b")), "fresh nonces")
    }

    func testWrongKeyFailsAtOpen() throws {
        let directory = TemporaryDirectory("wrongkey")
        try writeObject([1, 2, 3], to: directory.child("o"), key: try randomObjectKey(), fileID: try randomFileID())
        XCTAssertThrowsError(try VaultObjectReader(path: directory.child("o"), key: try randomObjectKey())) {
            XCTAssertEqual($0 as? VaultError, .objectNotAuthentic(path: directory.child("o"), chunk: 0))
        }
    }
}

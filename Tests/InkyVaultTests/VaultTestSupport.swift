import Foundation
import XCTest
@testable import InkyVault

/// A fresh directory under the system temp dir, removed when the test ends.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = "vault") {
        let template = NSTemporaryDirectory() + "inkyvault-\(label)-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { fatalError("mkdtemp failed for \(template)") }
        path = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func child(_ name: String) -> String { path + "/" + name }
}

/// Low iteration count for tests that are not about the KDF cost: the suite must stay fast.
let fastKDF = VaultKDF.pbkdf2SHA256(iterations: 1_000)

func password(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

func readBytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

func writeBytes(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Deterministic, non-repeating-looking test content (a 64-bit LCG's high bytes).
func patternBytes(count: Int, seed: UInt64 = 1) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
}

func sha256Hex(_ bytes: [UInt8]) throws -> String { HexEncoding.encode(try SHA256Hasher.hash(bytes)) }

/// A random 32-byte object key, as `VaultKeys.objectKey` would give.
func randomObjectKey() throws -> SecureBytes { try SecureBytes(randomCount: 32) }

func randomFileID() throws -> VaultFileID { VaultFileID(bytes: try RandomBytes.bytes(count: 32))! }

/// Writes `plaintext` as an object at `path`, feeding the writer in uneven pieces.
@discardableResult
func writeObject(
    _ plaintext: [UInt8], to path: String, key: SecureBytes, fileID: VaultFileID, pieceSizes: [Int] = [7, 4096, 65_537, 1]
) throws -> VaultObjectHeader {
    let writer = try VaultObjectWriter(path: path, key: key, fileID: fileID, plaintextSize: UInt64(plaintext.count))
    var offset = 0
    var turn = 0
    while offset < plaintext.count {
        let take = min(pieceSizes[turn % pieceSizes.count], plaintext.count - offset)
        try writer.write(Array(plaintext[offset..<offset + take]))
        offset += take
        turn += 1
    }
    try writer.finish()
    return writer.header
}

/// Every plaintext byte from `start` to the end through the reader, in reads of `step` bytes
/// (4 KiB, as libarchive would ask, unless a test asks otherwise).
func readAll(_ reader: VaultObjectReader, from start: UInt64 = 0, step: Int = 4096) throws -> [UInt8] {
    var result: [UInt8] = []
    var offset = start
    while offset < reader.size {
        let piece = try reader.read(at: offset, count: step)
        XCTAssertFalse(piece.isEmpty)
        result += piece
        offset += UInt64(piece.count)
    }
    return result
}

/// Overwrites bytes in place (the file keeps its size).
func patch(_ path: String, at offset: Int, with bytes: [UInt8]) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: Data(bytes))
}

func truncate(_ path: String, to length: Int) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.truncate(atOffset: UInt64(length))
}

/// The error thrown by `body`, failing the test if it returned normally.
func thrownError<T>(_ body: () throws -> T, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) -> Error? {
    do {
        _ = try body()
        XCTFail("expected an error. \(message)", file: file, line: line)
        return nil
    } catch {
        return error
    }
}

extension VaultError {
    /// The errors that may legitimately answer a damaged or tampered object.
    var isObjectRejection: Bool {
        switch self {
        case .damagedObject, .objectNotAuthentic, .unsupportedFormatVersion: true
        default: false
        }
    }
}

import XCTest
@testable import InkyVault

/// Published vectors for the primitives the vault format is built on, so a wrong
/// digest or parameter wiring fails here, not somewhere inside the vault.
final class KeyDerivationPrimitiveTests: XCTestCase {
    private func bytes(_ key: SecureBytes) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    // RFC 7914 section 11: PBKDF2-HMAC-SHA256, P = "passwd", S = "salt", c = 1, dkLen = 64.
    func testPBKDF2RFC7914Vector1() throws {
        let key = try PBKDF2SHA256.deriveKey(password: password("passwd"), salt: Array("salt".utf8),
                                             iterations: 1, length: 64)
        XCTAssertEqual(hexString(bytes(key)), """
            55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc\
            49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783
            """)
    }

    // RFC 7914 section 11: P = "Password", S = "NaCl", c = 80000, dkLen = 64.
    func testPBKDF2RFC7914Vector2() throws {
        let key = try PBKDF2SHA256.deriveKey(password: password("Password"), salt: Array("NaCl".utf8),
                                             iterations: 80_000, length: 64)
        XCTAssertEqual(hexString(bytes(key)), """
            4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56\
            a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d
            """)
    }

    func testPBKDF2RejectsZeroIterations() {
        XCTAssertThrowsError(try PBKDF2SHA256.deriveKey(password: password("x"), salt: [1], iterations: 0)) {
            XCTAssertEqual($0 as? CryptoError, .invalidKDFParameters("PBKDF2 iterations must be between 1 and \(Int32.max)"))
            XCTAssertEqual("\($0)", "invalid KDF parameters: PBKDF2 iterations must be between 1 and \(Int32.max)", "not called scrypt's")
        }
    }

    // RFC 5869 appendix A.1 (SHA-256, basic) and A.3 (zero-length salt and info).
    func testHKDFRFC5869Vectors() throws {
        let ikm = SecureBytes(copying: [UInt8](repeating: 0x0b, count: 22))
        let a1 = try HKDFSHA256.deriveKey(inputKey: ikm, salt: Array(0x00...0x0c), info: Array(0xf0...0xf9), length: 42)
        XCTAssertEqual(hexString(bytes(a1)),
                       "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        let a3 = try HKDFSHA256.deriveKey(inputKey: ikm, info: [], length: 42)
        XCTAssertEqual(hexString(bytes(a3)),
                       "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    // FIPS 180-2 appendix B.1 and the empty string.
    func testSHA256Vectors() throws {
        XCTAssertEqual(try sha256Hex(Array("abc".utf8)),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(try sha256Hex([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let hasher = try SHA256Hasher()
        try hasher.update(Array("a".utf8))
        try hasher.update(Array("bc".utf8))
        XCTAssertEqual(HexEncoding.encode(try hasher.finish()), try sha256Hex(Array("abc".utf8)), "streaming = one shot")
    }

    func testSubkeysAreDistinctAndObjectKeysDependOnTheFileID() throws {
        let keys = try VaultKeys(masterKey: SecureBytes(copying: [UInt8](repeating: 7, count: 32)))
        XCTAssertFalse(keys.manifestKey.constantTimeEquals(keys.contentKey))
        XCTAssertFalse(keys.manifestKey.constantTimeEquals(keys.masterKey))
        let a = VaultFileID(bytes: [UInt8](repeating: 1, count: 32))!
        let b = VaultFileID(bytes: [UInt8](repeating: 2, count: 32))!
        XCTAssertTrue(try keys.objectKey(fileID: a).constantTimeEquals(try keys.objectKey(fileID: a)))
        XCTAssertFalse(try keys.objectKey(fileID: a).constantTimeEquals(try keys.objectKey(fileID: b)))
        XCTAssertFalse(try keys.objectKey(fileID: a).constantTimeEquals(keys.contentKey))
        // Pinned: the labels are part of the format (docs/vault-format.md); this value was
        // computed independently with Python's `cryptography` HKDF.
        XCTAssertEqual(hexString(bytes(keys.manifestKey)), Self.pinnedManifestKeyForSevens)
    }

    static let pinnedManifestKeyForSevens = "df64990cc4cb70008ba2163c23d3f7912075e98b809b95b3e531cfaa7424c612"

    func testDeterministicRandomnessRepeatsAndSystemRandomnessDoesNot() throws {
        let a = RandomSource.deterministic(seed: [1, 2, 3])
        let b = RandomSource.deterministic(seed: [1, 2, 3])
        let c = RandomSource.deterministic(seed: [1, 2, 4])
        let first = try a.bytes(count: 45)
        XCTAssertEqual(first, try b.bytes(count: 45))
        XCTAssertNotEqual(first, try c.bytes(count: 45))
        XCTAssertNotEqual(try a.bytes(count: 45), first, "the stream moves on")
        XCTAssertNotEqual(try RandomSource.system.bytes(count: 32), try RandomSource.system.bytes(count: 32))
    }

    func testHexEncodingIsStrict() {
        XCTAssertEqual(HexEncoding.encode([0x00, 0xAB, 0xFF]), "00abff")
        XCTAssertEqual(HexEncoding.decode("00abff"), [0x00, 0xAB, 0xFF])
        XCTAssertNil(HexEncoding.decode("00ABFF"), "one spelling only: lowercase")
        XCTAssertNil(HexEncoding.decode("abc"))
        XCTAssertNil(HexEncoding.decode("zz"))
        XCTAssertNil(VaultFileID(hex: "00"))
    }
}

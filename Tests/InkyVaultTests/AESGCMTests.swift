import XCTest
import InkyVault

final class AESGCMTests: XCTestCase {
    // McGrew & Viega, "The Galois/Counter Mode of Operation (GCM)", revised 2005, Appendix B,
    // Test Case 16: 256-bit key, 96-bit IV, 60-byte plaintext, 20 bytes of associated data.
    // (The same vector appears in NIST's gcmEncryptExtIV256 set and is checked against
    // Python's `cryptography` here as well.)
    private let key16 = hex("feffe9928665731c6d6a8f9467308308 feffe9928665731c6d6a8f9467308308")
    private let nonce16 = hex("cafebabefacedbaddecaf888")
    private let plaintext16 = hex("""
        d9313225f88406e5a55909c5aff5269a 86a7a9531534f7da2e4c303d8a318a72
        1c3c0c95956809532fcf0e2449a6b525 b16aedf5aa0de657ba637b39
        """)
    private let aad16 = hex("feedfacedeadbeeffeedfacedeadbeef abaddad2")
    private let ciphertext16 = hex("""
        522dc1f099567d07f47f37a32a84427d 643a8cdcbfe5c0c97598a2bd2555d1aa
        8cb08e48590dbb3da7b08b1056828838 c5f61e6393ba7a0abcc9f662
        """)
    private let tag16 = hex("76fc6ece0f4e1768cddf8853bb2d551b")

    func testSealMatchesMcGrewViegaTestCase16() throws {
        let sealed = try AESGCM.seal(plaintext: plaintext16, key: SecureBytes(copying: key16),
                                     nonce: nonce16, aad: aad16)
        XCTAssertEqual(hexString(sealed.ciphertext), hexString(ciphertext16))
        XCTAssertEqual(hexString(sealed.tag), hexString(tag16))
    }

    func testOpenMatchesMcGrewViegaTestCase16() throws {
        let opened = try AESGCM.open(ciphertext: ciphertext16, tag: tag16, key: SecureBytes(copying: key16),
                                     nonce: nonce16, aad: aad16)
        XCTAssertEqual(opened, plaintext16)
    }

    // Same paper, Test Cases 13 and 14: all-zero 256-bit key and IV, no AAD; 13 has an
    // empty plaintext (the tag alone authenticates nothing but the key and nonce).
    func testEmptyAndZeroBlockVectors() throws {
        let zeroKey = SecureBytes(copying: [UInt8](repeating: 0, count: 32))
        let zeroNonce = [UInt8](repeating: 0, count: 12)
        let empty = try AESGCM.seal(plaintext: [], key: zeroKey, nonce: zeroNonce)
        XCTAssertEqual(empty.ciphertext, [])
        XCTAssertEqual(hexString(empty.tag), "530f8afbc74536b9a963b4f1c4cb738b")
        XCTAssertEqual(try AESGCM.open(ciphertext: [], tag: empty.tag, key: zeroKey, nonce: zeroNonce), [])

        let block = try AESGCM.seal(plaintext: [UInt8](repeating: 0, count: 16), key: zeroKey, nonce: zeroNonce)
        XCTAssertEqual(hexString(block.ciphertext), "cea7403d4d606b6e074ec5d3baf39d18")
        XCTAssertEqual(hexString(block.tag), "d0d1c8a799996bf0265b98b5d48ab919")
    }

    func testRoundTripWithRandomKeyAndNonce() throws {
        let key = try SecureBytes(randomCount: AESGCM.keyLength)
        let nonce = try RandomBytes.bytes(count: AESGCM.nonceLength)
        let message = Array("page 0001.jpg — ünïcödé".utf8) + [UInt8](repeating: 0xAB, count: 100_000)
        let aad = Array("chunk 7".utf8)
        let sealed = try AESGCM.seal(plaintext: message, key: key, nonce: nonce, aad: aad)
        XCTAssertEqual(sealed.ciphertext.count, message.count)
        XCTAssertNotEqual(sealed.ciphertext, message)
        XCTAssertEqual(try AESGCM.open(ciphertext: sealed.ciphertext, tag: sealed.tag, key: key,
                                       nonce: nonce, aad: aad), message)
    }

    func testFlippingAnyBitOfCiphertextTagOrAADFailsAuthentication() throws {
        let key = SecureBytes(copying: key16)
        for bit in [0, 7, 100, ciphertext16.count * 8 - 1] {
            var tampered = ciphertext16
            tampered[bit / 8] ^= 1 << (bit % 8)
            assertAuthenticationFails(try AESGCM.open(ciphertext: tampered, tag: tag16, key: key,
                                                      nonce: nonce16, aad: aad16), "ciphertext bit \(bit)")
        }
        for bit in [0, 64, 127] {
            var tampered = tag16
            tampered[bit / 8] ^= 1 << (bit % 8)
            assertAuthenticationFails(try AESGCM.open(ciphertext: ciphertext16, tag: tampered, key: key,
                                                      nonce: nonce16, aad: aad16), "tag bit \(bit)")
        }
        var tamperedAAD = aad16
        tamperedAAD[19] ^= 0x01
        assertAuthenticationFails(try AESGCM.open(ciphertext: ciphertext16, tag: tag16, key: key,
                                                  nonce: nonce16, aad: tamperedAAD), "aad")
        assertAuthenticationFails(try AESGCM.open(ciphertext: ciphertext16, tag: tag16, key: key,
                                                  nonce: nonce16, aad: []), "missing aad")
        var tamperedNonce = nonce16
        tamperedNonce[0] ^= 0x80
        assertAuthenticationFails(try AESGCM.open(ciphertext: ciphertext16, tag: tag16, key: key,
                                                  nonce: tamperedNonce, aad: aad16), "nonce")
    }

    func testWrongKeyFailsAuthentication() throws {
        var wrong = key16
        wrong[31] ^= 0x01
        assertAuthenticationFails(try AESGCM.open(ciphertext: ciphertext16, tag: tag16,
                                                  key: SecureBytes(copying: wrong),
                                                  nonce: nonce16, aad: aad16), "wrong key")
    }

    func testFailedOpenWipesTheCallersOutputBuffer() throws {
        var tampered = tag16
        tampered[0] ^= 0x01
        var output = [UInt8](repeating: 0xEE, count: ciphertext16.count)
        let key = SecureBytes(copying: key16)
        XCTAssertThrowsError(try ciphertext16.withUnsafeBytes { ciphertext in
            try tampered.withUnsafeBytes { tag in
                try nonce16.withUnsafeBytes { nonce in
                    try aad16.withUnsafeBytes { aad in
                        try output.withUnsafeMutableBytes { output in
                            try AESGCM.open(ciphertext: ciphertext, tag: tag, into: output,
                                            key: key, nonce: nonce, aad: aad)
                        }
                    }
                }
            }
        }) { XCTAssertEqual($0 as? CryptoError, .authenticationFailed) }
        XCTAssertEqual(output, [UInt8](repeating: 0, count: ciphertext16.count),
                       "unauthenticated plaintext must not be left in the output")
    }

    func testInPlaceSealAndOpenWithBufferVariants() throws {
        let key = SecureBytes(copying: key16)
        var buffer = plaintext16
        var tag = [UInt8](repeating: 0, count: AESGCM.tagLength)
        try nonce16.withUnsafeBytes { nonce in
            try aad16.withUnsafeBytes { aad in
                try buffer.withUnsafeMutableBytes { buffer in
                    try tag.withUnsafeMutableBytes { tag in
                        try AESGCM.seal(plaintext: UnsafeRawBufferPointer(buffer), into: buffer, tag: tag,
                                        key: key, nonce: nonce, aad: aad)
                    }
                }
            }
        }
        XCTAssertEqual(buffer, ciphertext16)
        XCTAssertEqual(tag, tag16)
        try nonce16.withUnsafeBytes { nonce in
            try aad16.withUnsafeBytes { aad in
                try tag.withUnsafeBytes { tag in
                    try buffer.withUnsafeMutableBytes { buffer in
                        try AESGCM.open(ciphertext: UnsafeRawBufferPointer(buffer), tag: tag, into: buffer,
                                        key: key, nonce: nonce, aad: aad)
                    }
                }
            }
        }
        XCTAssertEqual(buffer, plaintext16)
    }

    func testRejectsWrongKeyNonceAndTagLengths() throws {
        XCTAssertThrowsError(try AESGCM.seal(plaintext: [1], key: SecureBytes(copying: [UInt8](repeating: 0, count: 16)),
                                             nonce: nonce16)) {
            XCTAssertEqual($0 as? CryptoError, .invalidKeyLength)
        }
        XCTAssertThrowsError(try AESGCM.seal(plaintext: [1], key: SecureBytes(copying: key16),
                                             nonce: [UInt8](repeating: 0, count: 16))) {
            XCTAssertEqual($0 as? CryptoError, .invalidNonceLength)
        }
        XCTAssertThrowsError(try AESGCM.open(ciphertext: ciphertext16, tag: Array(tag16.prefix(12)),
                                             key: SecureBytes(copying: key16), nonce: nonce16, aad: aad16)) {
            XCTAssertEqual($0 as? CryptoError, .invalidTagLength)
        }
    }

    private func assertAuthenticationFails(
        _ expression: @autoclosure () throws -> [UInt8], _ what: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try expression(), what, file: file, line: line) { error in
            XCTAssertEqual(error as? CryptoError, .authenticationFailed, what, file: file, line: line)
        }
    }
}

import XCTest
import InkyVault

final class PasswordKDFTests: XCTestCase {
    private func bytes(_ key: SecureBytes) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    // RFC 7914 ("The scrypt Password-Based Key Derivation Function"), section 12,
    // second vector: P = "password", S = "NaCl", N = 1024, r = 8, p = 16, dkLen = 64.
    func testRFC7914PasswordNaClVector() throws {
        let key = try PasswordKDF.deriveKey(password: Array("password".utf8), salt: Array("NaCl".utf8),
                                            parameters: ScryptParameters(n: 1024, r: 8, p: 16), length: 64)
        XCTAssertEqual(hexString(bytes(key)), """
            fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162\
            2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640
            """)
    }

    // RFC 7914 section 12, first vector: empty password and salt, N = 16, r = 1, p = 1.
    // Empty inputs are the edge where a nil buffer address could slip through.
    func testRFC7914EmptyPasswordVector() throws {
        let key = try PasswordKDF.deriveKey(password: SecureBytes(copying: []), salt: [],
                                            parameters: ScryptParameters(n: 16, r: 1, p: 1), length: 64)
        XCTAssertEqual(hexString(bytes(key)), """
            77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442\
            fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906
            """)
    }

    func testSecureBytesAndArrayPasswordsDeriveTheSameKey() throws {
        let parameters = ScryptParameters(n: 1024, r: 8, p: 1)
        let salt = try RandomBytes.bytes(count: PasswordKDF.recommendedSaltLength)
        let fromArray = try PasswordKDF.deriveKey(password: Array("hunter2".utf8), salt: salt, parameters: parameters)
        let fromSecure = try PasswordKDF.deriveKey(password: SecureBytes(copying: Array("hunter2".utf8)),
                                                   salt: salt, parameters: parameters)
        XCTAssertEqual(fromArray.count, 32)
        XCTAssertTrue(fromArray.constantTimeEquals(fromSecure))
        let otherSalt = try PasswordKDF.deriveKey(password: Array("hunter2".utf8), salt: salt.map { $0 ^ 1 },
                                                  parameters: parameters)
        XCTAssertFalse(fromArray.constantTimeEquals(otherSalt))
    }

    func testDefaultParametersDeriveAUsableAESKey() throws {
        XCTAssertEqual(ScryptParameters.default, ScryptParameters(n: 32768, r: 8, p: 1, maxMemory: 64 << 20))
        let salt = [UInt8](repeating: 7, count: 16)
        let key = try PasswordKDF.deriveKey(password: Array("correct horse".utf8), salt: salt)
        XCTAssertEqual(key.count, AESGCM.keyLength)
        let nonce = [UInt8](repeating: 0, count: 12)
        let sealed = try AESGCM.seal(plaintext: [1, 2, 3], key: key, nonce: nonce)
        let again = try PasswordKDF.deriveKey(password: Array("correct horse".utf8), salt: salt)
        XCTAssertEqual(try AESGCM.open(ciphertext: sealed.ciphertext, tag: sealed.tag, key: again, nonce: nonce),
                       [1, 2, 3])
    }

    func testInvalidParametersAreRejectedBeforeDeriving() {
        // N must be a power of two; 2^20 · 8 · 128 bytes = 1 GiB, far above a 64 MiB ceiling:
        // refused, not allocated. Each names the parameters (then OpenSSL's words).
        for parameters in [ScryptParameters(n: 1000, r: 8, p: 1), ScryptParameters(n: 1 << 20, r: 8, p: 1)] {
            XCTAssertThrowsError(try PasswordKDF.deriveKey(password: [1], salt: [2], parameters: parameters)) {
                guard case .invalidKDFParameters(let detail)? = $0 as? CryptoError else { return XCTFail("got \($0)") }
                let named = "scrypt N=\(parameters.n) r=8 p=1 maxMemory=\(parameters.maxMemory): "
                XCTAssertTrue(detail.hasPrefix(named), detail)
            }
        }
    }

    func testParametersRoundTripThroughCodable() throws {
        let data = try JSONEncoder().encode(ScryptParameters.default)
        XCTAssertEqual(try JSONDecoder().decode(ScryptParameters.self, from: data), .default)
    }
}

import XCTest
import InkyVault

final class RandomAndSecureBytesTests: XCTestCase {
    func testRandomBytesHaveRequestedLengthAndDiffer() throws {
        for count in [0, 1, 12, 32, 4096] {
            XCTAssertEqual(try RandomBytes.bytes(count: count).count, count)
        }
        let first = try RandomBytes.bytes(count: 32)
        let second = try RandomBytes.bytes(count: 32)
        XCTAssertNotEqual(first, second)
        // 32 random bytes all zero has probability 2^-256: this catches an unfilled buffer.
        XCTAssertNotEqual(first, [UInt8](repeating: 0, count: 32))
    }

    func testRandomSecureBytesDiffer() throws {
        let a = try SecureBytes(randomCount: 32)
        let b = try SecureBytes(randomCount: 32)
        XCTAssertEqual(a.count, 32)
        XCTAssertFalse(a.constantTimeEquals(b))
        XCTAssertTrue(a.constantTimeEquals(a))
    }

    func testSecureBytesCopiesContentAndHidesItFromDescription() {
        let secret: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF]
        let key = SecureBytes(copying: secret)
        XCTAssertEqual(key.withUnsafeBytes { Array($0) }, secret)
        XCTAssertEqual(key.count, 4)
        XCTAssertEqual("\(key)", "SecureBytes(4 bytes)")
        XCTAssertFalse(key.constantTimeEquals(SecureBytes(copying: [0xDE, 0xAD, 0xBE])))
        XCTAssertTrue(SecureBytes(copying: []).constantTimeEquals(SecureBytes(copying: [])))
    }

    func testInitializerErrorPropagates() {
        struct Boom: Error {}
        XCTAssertThrowsError(try SecureBytes(count: 8) { _ throws(Boom) in throw Boom() }) {
            XCTAssertTrue($0 is Boom)
        }
    }

    func testOpenSSLVersionIsReported() {
        XCTAssertTrue(OpenSSLVersion.version.hasPrefix("OpenSSL "), OpenSSLVersion.version)
    }
}

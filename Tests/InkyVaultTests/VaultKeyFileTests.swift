import Foundation
import XCTest
@testable import InkyVault
import Synchronization

final class VaultKeyFileTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var vault: String { directory.child("vault") }
    private var paths: VaultPaths { VaultPaths(root: vault) }

    override func setUp() { directory = TemporaryDirectory("keyfile") }
    override func tearDown() { directory = nil }

    private var derivations: Int { VaultKDF.derivationCount.load(ordering: .relaxed) }

    /// Unlocks through the real loader (fallback included) and returns the master key.
    private func unlockKey(_ text: String) throws -> SecureBytes {
        try VaultKeyFileStore.unlock(paths, password: password(text)).masterKey
    }

    // MARK: Default parameters, wrong password

    func testDefaultKDFWrongPasswordCostsExactlyOneDerivation() throws {
        XCTAssertEqual(VaultKDF.default, .pbkdf2SHA256(iterations: 600_000))
        let createStart = Date()
        try Vault.create(at: vault, password: password("correct horse"))
        let createSeconds = Date().timeIntervalSince(createStart)
        guard case .success(let file) = VaultKeyFile.parse(try readBytes(paths.keyFile)) else {
            return XCTFail("key file does not parse")
        }
        XCTAssertEqual(file.kdf, .default, "the default is what is stored")
        XCTAssertEqual(file.salt.count, 32)

        let before = derivations
        XCTAssertThrowsError(try Vault.unlock(at: vault, password: password("wrong horse"))) {
            XCTAssertEqual($0 as? VaultError, .wrongPassword)
        }
        XCTAssertEqual(derivations - before, 1, "a wrong password costs one derivation, .prev is not tried")

        let unlockStart = Date()
        let unlocked = try Vault.unlock(at: vault, password: password("correct horse"))
        let unlockSeconds = Date().timeIntervalSince(unlockStart)
        XCTAssertEqual(derivations - before, 2)
        XCTAssertTrue(unlocked.unlockReport.isClean)
        print("Default KDF (PBKDF2-SHA256, 600,000 iterations): create \(String(format: "%.3f", createSeconds)) s, "
              + "unlock \(String(format: "%.3f", unlockSeconds)) s")
    }

    // MARK: Damage

    func testFlippingAnyBitOfTheKeyFileIsReportedAsDamageBeforeAnyDerivation() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        try FileManager.default.removeItem(atPath: paths.previousKeyFile)  // no fallback: see the damage itself
        let original = try readBytes(paths.keyFile)
        XCTAssertEqual(original.count, VaultKeyFile.fileLength)
        let before = derivations
        for position in 0..<original.count {
            var bytes = original
            bytes[position] ^= UInt8(1) << UInt8(position % 8)
            try writeBytes(bytes, to: paths.keyFile)
            XCTAssertThrowsError(try unlockKey("pw"), "byte \(position)") { error in
                guard case .damagedKeyFile? = error as? VaultError else { return XCTFail("byte \(position): \(error)") }
            }
        }
        XCTAssertEqual(derivations, before, "the checksum catches damage without running the KDF")
        try writeBytes(original, to: paths.keyFile)
        XCTAssertNoThrow(try unlockKey("pw"))
    }

    func testForgedKeyFilesWithAValidChecksumNeverUnlock() throws {
        // An attacker can recompute the checksum; then GCM (over every header byte) or the
        // parameter caps must refuse. This is the "no downgrade" check.
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        try FileManager.default.removeItem(atPath: paths.previousKeyFile)
        let original = try readBytes(paths.keyFile)
        let body = Array(original.dropLast(32))
        for position in 0..<body.count {
            // Bytes 12...17 are the high bytes of the iteration count (1,000 = 0x3E8): flipping
            // their top bit gives ≥ 2^31 iterations, refused by the cap at once; byte 17's
            // lowest bit gives 66,536, still cheap. Any other bit there would be an in-bounds
            // but slow setting (millions of iterations) that fails the same way, only later.
            let bit: UInt8 = (12...16).contains(position) ? 7 : (position == 17 ? 0 : UInt8(position % 8))
            var forged = body
            forged[position] ^= 1 << bit
            try writeBytes(forged + (try SHA256Hasher.hash(forged)), to: paths.keyFile)
            XCTAssertThrowsError(try unlockKey("pw"), "byte \(position)") { error in
                switch error as? VaultError {
                case .wrongPassword?, .damagedKeyFile?, .unsupportedFormatVersion?: break
                default: XCTFail("byte \(position): \(error)")
                }
            }
        }
    }

    func testHostileKDFParametersAreRefusedWithoutDeriving() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        try FileManager.default.removeItem(atPath: paths.previousKeyFile)
        let original = try readBytes(paths.keyFile)
        func forge(id: UInt16, _ p0: UInt64, _ p1: UInt64 = 0, _ p2: UInt64 = 0) throws {
            var body = Array(original.dropLast(32))
            var fields: [UInt8] = []
            fields.appendBigEndian(id)
            fields.appendBigEndian(p0)
            fields.appendBigEndian(p1)
            fields.appendBigEndian(p2)
            body.replaceSubrange(10..<36, with: fields)
            try writeBytes(body + (try SHA256Hasher.hash(body)), to: paths.keyFile)
        }
        let before = derivations
        let hostile: [(UInt16, UInt64, UInt64, UInt64, String)] = [
            (1, 100_000_001, 0, 0, "PBKDF2 above 10^8 iterations"),
            (1, UInt64(UInt32.max) + 1, 0, 0, "PBKDF2 iterations beyond 32 bits"),
            (1, 999, 0, 0, "PBKDF2 below the floor"),
            (1, 1_000, 1, 0, "PBKDF2 with a stray parameter"),
            (2, 1 << 30, 8, 1, "scrypt N = 2^30"),
            (2, 1 << 20, 32, 1, "scrypt needing 4 GiB"),
            (2, 1 << 22, 8, 16, "scrypt N·r·p too large"),
            (2, 1000, 8, 1, "scrypt N not a power of two"),
            (2, 1 << 14, 0, 1, "scrypt r = 0"),
            (3, 3, 65_536, 1, "Argon2id (reserved)"),
            (99, 1, 1, 1, "unknown KDF"),
        ]
        for (id, p0, p1, p2, what) in hostile {
            try forge(id: id, p0, p1, p2)
            XCTAssertThrowsError(try unlockKey("pw"), what) { error in
                guard case .damagedKeyFile? = error as? VaultError else { return XCTFail("\(what): \(error)") }
            }
        }
        XCTAssertEqual(derivations, before, "hostile parameters are refused before deriving")
    }

    func testNewerFormatVersionIsReportedAsSuch() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        var body = Array(try readBytes(paths.keyFile).dropLast(32))
        body[9] = 2
        try writeBytes(body + (try SHA256Hasher.hash(body)), to: paths.keyFile)
        XCTAssertThrowsError(try unlockKey("pw")) {
            XCTAssertEqual($0 as? VaultError, .unsupportedFormatVersion(path: self.paths.keyFile, version: 2))
        }
    }

    func testCreateRefusesParametersOutsideTheCaps() {
        XCTAssertThrowsError(try Vault.create(at: vault, password: password("pw"), kdf: .pbkdf2SHA256(iterations: 10))) {
            guard case .invalidKDFParameters? = $0 as? VaultError else { return XCTFail("\($0)") }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: vault), "nothing created")
    }

    // MARK: Fallback

    func testDamagedOrMissingKeyFileFallsBackToPrevious() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        let original = try readBytes(paths.keyFile)
        XCTAssertEqual(try readBytes(paths.previousKeyFile), original, "a backup from the start")
        let reference = try unlockKey("pw")

        var damaged = original
        damaged[100] ^= 0x10
        try writeBytes(damaged, to: paths.keyFile)
        let before = derivations
        let unlocked = try Vault.unlock(at: vault, password: password("pw"))
        XCTAssertEqual(derivations - before, 1)
        XCTAssertNotNil(unlocked.unlockReport.keyFileFallbackReason)
        XCTAssertTrue(try unlocked.keys().masterKey.constantTimeEquals(reference))
        unlocked.lock()

        try writeBytes([1, 2, 3], to: paths.keyFile)
        XCTAssertTrue(try unlockKey("pw").constantTimeEquals(reference), "garbage main file")
        try FileManager.default.removeItem(atPath: paths.keyFile)
        XCTAssertTrue(try unlockKey("pw").constantTimeEquals(reference), "missing main file")

        // A wrong password against .prev while the main file is missing: plain wrong password.
        XCTAssertThrowsError(try unlockKey("nope")) { XCTAssertEqual($0 as? VaultError, .wrongPassword) }

        // Both gone or damaged: said so, distinctly.
        try writeBytes(damaged, to: paths.keyFile)
        try writeBytes(damaged, to: paths.previousKeyFile)
        XCTAssertThrowsError(try unlockKey("pw")) {
            guard case .damagedKeyFile? = $0 as? VaultError else { return XCTFail("\($0)") }
        }
        try FileManager.default.removeItem(atPath: paths.keyFile)
        try FileManager.default.removeItem(atPath: paths.previousKeyFile)
        XCTAssertThrowsError(try Vault.unlock(at: vault, password: password("pw"))) {
            XCTAssertEqual($0 as? VaultError, .notAVault(path: self.vault))
        }
    }

    func testAfterAPasswordChangeTheOldPasswordOpensNothing() throws {
        try Vault.create(at: vault, password: password("old"), kdf: fastKDF)
        let unlocked = try Vault.unlock(at: vault, password: password("old"))
        try unlocked.changePassword(old: password("old"), new: password("new"))
        unlocked.lock()
        XCTAssertEqual(try readBytes(paths.previousKeyFile), try readBytes(paths.keyFile),
                       "once the new vault.key is durable, .prev holds it too: the old wrapping is gone")
        XCTAssertNoThrow(try unlockKey("new"))
        XCTAssertThrowsError(try unlockKey("old")) { XCTAssertEqual($0 as? VaultError, .wrongPassword) }

        var damaged = try readBytes(paths.keyFile)
        damaged[0] ^= 1
        try writeBytes(damaged, to: paths.keyFile)
        XCTAssertThrowsError(try unlockKey("old"), "a damaged vault.key lets no old password in") { error in
            guard case .damagedKeyFile? = error as? VaultError else { return XCTFail("\(error)") }
        }
        XCTAssertNoThrow(try unlockKey("new"), "never locked out: the new password opens the backup")
    }

    func testAnUnlockRetiresTheOldWrappingAKilledPasswordChangeLeftInPrev() throws {
        try Vault.create(at: vault, password: password("old"), kdf: fastKDF)
        let oldFile = try readBytes(paths.keyFile)
        let unlocked = try Vault.unlock(at: vault, password: password("old"))
        try unlocked.changePassword(old: password("old"), new: password("new"))
        unlocked.lock()
        try writeBytes(oldFile, to: paths.previousKeyFile)  // as if killed before .prev was retired
        try Vault.unlock(at: vault, password: password("new")).lock()
        XCTAssertEqual(try readBytes(paths.previousKeyFile), try readBytes(paths.keyFile))
        var damaged = try readBytes(paths.keyFile)
        damaged[0] ^= 1
        try writeBytes(damaged, to: paths.keyFile)
        XCTAssertThrowsError(try unlockKey("old")) { error in
            // vault.key is damaged and .prev, retired to the new wrapping, refuses the old password.
            guard case .damagedKeyFile(let path, let detail)? = error as? VaultError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, self.paths.keyFile)
            XCTAssertTrue(detail.contains("checksum mismatch") && detail.contains("vault.key.prev does not accept this password"), detail)
        }
    }

    func testAPasswordChangeNeverCarriesAWeakerCostForward() throws {
        try Vault.create(at: vault, password: password("old"), kdf: fastKDF)
        let unlocked = try Vault.unlock(at: vault, password: password("old"))
        defer { unlocked.lock() }
        try unlocked.changePassword(old: password("old"), new: password("new"))
        guard case .success(let file) = VaultKeyFile.parse(try readBytes(paths.keyFile)) else { return XCTFail() }
        XCTAssertEqual(file.kdf, .default, "1,000 iterations become today's default")
        XCTAssertEqual(VaultKDF.pbkdf2SHA256(iterations: 2_000_000).raisedToDefault, .pbkdf2SHA256(iterations: 2_000_000),
                       "a stronger cost is kept")
        XCTAssertEqual(VaultKDF.scrypt(n: 1 << 12, r: 8, p: 1).raisedToDefault, .default)
    }

    // MARK: Other KDFs

    func testScryptVaultsUnlock() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: .scrypt(n: 1 << 12, r: 8, p: 1))
        guard case .success(let file) = VaultKeyFile.parse(try readBytes(paths.keyFile)) else { return XCTFail() }
        XCTAssertEqual(file.kdf, .scrypt(n: 4096, r: 8, p: 1))
        XCTAssertNoThrow(try unlockKey("pw"))
        XCTAssertThrowsError(try unlockKey("wrong")) { XCTAssertEqual($0 as? VaultError, .wrongPassword) }
    }

    func testKeyFileLayoutOffsets() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        let bytes = try readBytes(paths.keyFile)
        XCTAssertEqual(bytes.count, 162)
        XCTAssertEqual(Array(bytes[0..<8]), Array("INKYVKEY".utf8))
        XCTAssertEqual(Array(bytes[8..<10]), [0, 1], "version 1")
        XCTAssertEqual(Array(bytes[10..<12]), [0, 1], "PBKDF2")
        XCTAssertEqual(Array(bytes[12..<36]), [0, 0, 0, 0, 0, 0, 0x03, 0xE8] + [UInt8](repeating: 0, count: 16))
        XCTAssertEqual(Array(bytes[36..<38]), [0, 1], "AES-256-GCM wrapping")
        XCTAssertEqual(Array(bytes[130...]), try SHA256Hasher.hash(Array(bytes[..<130])))
    }
}

import Foundation
import XCTest
@testable import InkyVault

final class VaultManifestTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var vault: String { directory.child("vault") }
    private var paths: VaultPaths { VaultPaths(root: vault) }

    override func setUp() { directory = TemporaryDirectory("manifest") }
    override func tearDown() { directory = nil }

    private func makeSource(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = directory.child(name)
        try writeBytes(bytes, to: path)
        return path
    }

    /// The generation is inside the encryption (format version 2): only the key reads it.
    private func generation(of path: String, _ vault: UnlockedVault) throws -> UInt64 {
        try VaultManifestFile.open(readBytes(path), key: vault.keys().manifestKey, path: path).generation
    }

    func testFlippingAnyBitOfTheManifestIsRefused() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        let unlocked = try Vault.unlock(at: vault, password: password("pw"))
        try unlocked.add(file: makeSource("Issue 1.cbz", [1, 2, 3]), displayPath: "Series/Issue 1.cbz")
        let key = try unlocked.keys().manifestKey
        unlocked.lock()
        let original = try readBytes(paths.manifest)
        XCTAssertNoThrow(try VaultManifestFile.open(original, key: key, path: "m"))
        for position in 0..<original.count {
            var bytes = original
            bytes[position] ^= UInt8(1) << UInt8(position % 8)
            XCTAssertThrowsError(try VaultManifestFile.open(bytes, key: key, path: "m"), "byte \(position)") { error in
                switch error as? VaultError {
                case .damagedManifest?, .unsupportedFormatVersion?: break
                default: XCTFail("byte \(position): \(error)")
                }
            }
        }
        // And through unlock, with no .prev to fall back on.
        try FileManager.default.removeItem(atPath: paths.previousManifest)
        var bytes = original
        bytes[original.count / 2] ^= 0x04
        try writeBytes(bytes, to: paths.manifest)
        XCTAssertThrowsError(try Vault.unlock(at: vault, password: password("pw"))) {
            guard case .damagedManifest? = $0 as? VaultError else { return XCTFail("\($0)") }
        }
    }

    func testDamagedManifestFallsBackToPreviousAndReportsIt() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        let unlocked = try Vault.unlock(at: vault, password: password("pw"))
        let first = try unlocked.add(file: makeSource("a.cbz", [1]), displayPath: "a.cbz")
        let second = try unlocked.add(file: makeSource("b.cbz", [2]), displayPath: "b.cbz")
        unlocked.lock()

        var bytes = try readBytes(paths.manifest)
        bytes[bytes.count - 1] ^= 0x01  // the tag
        try writeBytes(bytes, to: paths.manifest)
        // .prev is one generation older than the manifest last saved: a rollback, refused
        // untouched unless accepted (a damaged manifest.bin is also how an attacker would force it).
        XCTAssertThrowsError(try Vault.unlock(at: vault, password: password("pw"))) { error in
            guard case .manifestRolledBack? = error as? VaultError else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: paths.object(named: second.name)), "a refusal moves nothing")
        let recovered = try Vault.unlock(at: vault, password: password("pw"), acceptRollback: true)
        defer { recovered.lock() }
        XCTAssertNotNil(recovered.unlockReport.acceptedRollback)
        XCTAssertNotNil(recovered.unlockReport.manifestFallbackReason)
        XCTAssertEqual(try recovered.entries, [first], "the previous manifest predates the second add")
        XCTAssertEqual(recovered.unlockReport.movedToOrphans, [second.name], "its object is kept, as an orphan")
        XCTAssertTrue(FileManager.default.fileExists(atPath: paths.orphans + "/" + second.name))
        XCTAssertFalse(FileManager.default.fileExists(atPath: paths.object(named: second.name)))

        // The next save starts from the good copy and repairs the main file.
        let third = try recovered.add(file: makeSource("c.cbz", [3]), displayPath: "c.cbz")
        XCTAssertEqual(try generation(of: paths.manifest, recovered), try generation(of: paths.previousManifest, recovered) + 1)
        XCTAssertEqual(try recovered.entries, [first, third])
    }

    func testGenerationCountsUpAndNeverBack() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        let unlocked = try Vault.unlock(at: vault, password: password("pw"))
        XCTAssertEqual(try generation(of: paths.manifest, unlocked), 1)
        let entry = try unlocked.add(file: makeSource("a.cbz", [1]), displayPath: "a.cbz")
        XCTAssertEqual(try generation(of: paths.manifest, unlocked), 2)
        XCTAssertEqual(try generation(of: paths.previousManifest, unlocked), 1)
        try unlocked.remove(name: entry.name, to: directory.path)
        XCTAssertEqual(try generation(of: paths.manifest, unlocked), 3)
        XCTAssertEqual(try generation(of: paths.previousManifest, unlocked), 2)
        let key = try unlocked.keys().manifestKey
        unlocked.lock()

        let current = try readBytes(paths.manifest)
        for attempted: UInt64 in [3, 2, 0] {
            XCTAssertThrowsError(try VaultManifestStore.save(VaultManifest(), generation: attempted, current: 3,
                                                             currentImage: current, paths: paths, key: key,
                                                             randomness: .system)) {
                XCTAssertEqual($0 as? VaultError, .generationNotIncreasing(current: 3, attempted: attempted))
            }
        }
        XCTAssertEqual(try readBytes(paths.manifest), current, "a refused save writes nothing")
        XCTAssertEqual(try VaultManifestFile.open(current, key: key, path: "m").generation, 3)
    }

    func testPayloadIsJSONWithTheDocumentedFields() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        let unlocked = try Vault.unlock(at: vault, password: password("pw"))
        defer { unlocked.lock() }
        let entry = try unlocked.add(file: makeSource("Issue 1.cbz", Array("hello".utf8)), displayPath: "S/Issue 1.cbz")
        let image = try readBytes(paths.manifest)
        let key = try unlocked.keys().manifestKey
        XCTAssertEqual(Array(image[0..<12]), Array("INKYVMAN".utf8) + [0, 2, 0, 1], "format version 2, AES-256-GCM")
        let plaintext = try AESGCM.open(ciphertext: Array(image[24..<(image.count - 16)]), tag: Array(image.suffix(16)),
                                        key: key, nonce: Array(image[12..<24]), aad: Array(image[0..<24]))
        XCTAssertEqual(plaintext.count, 4096, "padded to the 4 KiB minimum")
        XCTAssertEqual(Array(plaintext[0..<8]), [0, 0, 0, 0, 0, 0, 0, 2], "the generation, inside the encryption")
        XCTAssertEqual(Set(plaintext.reversed().prefix(100)), [0x20], "padded with spaces after the JSON")
        let object = try JSONSerialization.jsonObject(with: Data(plaintext.dropFirst(8))) as! [String: Any]
        XCTAssertEqual(object["version"] as? Int, 1)
        let entries = object["entries"] as! [[String: Any]]
        XCTAssertEqual(Set(entries[0].keys), ["name", "fileID", "size", "sha256", "displayPath",
                                              "originalFileName", "dateAdded"])
        XCTAssertEqual(entries[0]["displayPath"] as? String, "S/Issue 1.cbz")
        XCTAssertEqual(entries[0]["sha256"] as? String, try sha256Hex(Array("hello".utf8)))
        XCTAssertEqual(entries[0]["fileID"] as? String, entry.fileID.hex)
        XCTAssertEqual(entries[0]["size"] as? Int, 5)
    }

    func testAuthenticButInvalidPayloadsAreRefused() throws {
        let key = try SecureBytes(randomCount: 32)
        let good = VaultEntry(name: String(repeating: "ab", count: 16), fileID: try randomFileID(), size: 1,
                              sha256: String(repeating: "00", count: 32), displayPath: "a.cbz",
                              originalFileName: "a.cbz", dateAdded: Date(timeIntervalSince1970: 0))
        let sealed = try VaultManifestFile.seal(VaultManifest(entries: [good]), generation: 5, key: key,
                                                randomness: .system)
        XCTAssertEqual(try VaultManifestFile.open(sealed, key: key, path: "m").manifest.entries, [good])
        // The folder it came from, kept by `moveIn`, round-trips; an entry without one (older) has no key for it.
        let placed = VaultEntry(name: good.name, fileID: good.fileID, size: 1, sha256: good.sha256, displayPath: "a.cbz",
                                originalFileName: "a.cbz", dateAdded: good.dateAdded, originFolder: "/home/me/Comics/Series")
        let withOrigin = try VaultManifestFile.seal(VaultManifest(entries: [placed]), generation: 5, key: key, randomness: .system)
        XCTAssertEqual(try VaultManifestFile.open(withOrigin, key: key, path: "m").manifest.entries.first?.originFolder, "/home/me/Comics/Series")
        XCTAssertFalse(String(decoding: try VaultManifest.encoder().encode(VaultManifest(entries: [good])), as: UTF8.self).contains("originFolder"))
        let hostile: [(VaultEntry, String)] = [
            (VaultEntry(name: "../../etc/passwd", fileID: good.fileID, size: 1, sha256: good.sha256,
                        displayPath: "a.cbz", originalFileName: "a.cbz", dateAdded: good.dateAdded), "name"),
            (VaultEntry(name: good.name, fileID: good.fileID, size: 1, sha256: good.sha256,
                        displayPath: "../a.cbz", originalFileName: "a.cbz", dateAdded: good.dateAdded), "path"),
            (VaultEntry(name: good.name, fileID: good.fileID, size: 1, sha256: good.sha256,
                        displayPath: "a.cbz", originalFileName: "x/y", dateAdded: good.dateAdded), "file name"),
            (VaultEntry(name: good.name, fileID: good.fileID, size: 1, sha256: "zz",
                        displayPath: "a.cbz", originalFileName: "a.cbz", dateAdded: good.dateAdded), "hash"),
            (VaultEntry(name: good.name, fileID: good.fileID, size: 1, sha256: good.sha256, displayPath: "a.cbz",
                        originalFileName: "a.cbz", dateAdded: good.dateAdded, originFolder: "Comics/Series"), "relative origin"),
        ]
        for (entry, what) in hostile {
            let sealed = try VaultManifestFile.seal(VaultManifest(entries: [entry]), generation: 5, key: key,
                                                    randomness: .system)
            XCTAssertThrowsError(try VaultManifestFile.open(sealed, key: key, path: "m"), what) {
                guard case .damagedManifest? = $0 as? VaultError else { return XCTFail("\(what): \($0)") }
            }
        }
        let twice = try VaultManifestFile.seal(VaultManifest(entries: [good, good]), generation: 5, key: key,
                                               randomness: .system)
        XCTAssertThrowsError(try VaultManifestFile.open(twice, key: key, path: "m"), "duplicates") {
            XCTAssertEqual($0 as? VaultError, .damagedManifest(path: "m", detail: "authentic but invalid payload: duplicate entry \(good.name)"))
        }
    }
}

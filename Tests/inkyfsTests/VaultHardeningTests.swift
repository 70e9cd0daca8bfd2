import Foundation
import InkyTestSupport
import XCTest

/// Attacks on a vault folder through the real commands: an old password kept, an old manifest
/// put back. Each test has its own state folder (where the newest manifest seen is recorded).
final class VaultHardeningTests: XCTestCase {
    private var folder: URL!
    private var vault: String { folder.appendingPathComponent("vault").path }

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("vault-hardening")
        for (name, text) in [("p1", "first pass\n"), ("p2", "second pass\n"), ("change", "first pass\nsecond pass\n")] {
            try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func vaultCommand(_ arguments: [String], password: String) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments + ["--vault", vault, "--password-file", folder.appendingPathComponent(password).path],
                                 environment: ["XDG_STATE_HOME": folder.appendingPathComponent("state").path])
    }

    private func comic(_ name: String, _ fixture: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: Corpus.fixture(fixture), toPath: path)
        return path
    }

    func testAfterPasswdTheOldPasswordOpensNothingEvenWithADamagedKeyFile() throws {
        XCTAssertEqual(try vaultCommand(["init"], password: "p1").status, 0)
        XCTAssertEqual(try vaultCommand(["add", comic("A.cbz", "Space Patrol/Space Patrol 001.cbz")], password: "p1").status, 0)
        let changed = try vaultCommand(["passwd"], password: "change")
        XCTAssertEqual(changed.status, 0, changed.stderr)
        XCTAssertEqual(try vaultCommand(["list"], password: "p1").status, 2, "P1 is a wrong password now")

        // The attacker's move: damage vault.key so that unlock falls back to vault.key.prev.
        let keyFile = vault + "/vault.key"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: keyFile))
        bytes[40] ^= 0x55
        try bytes.write(to: URL(fileURLWithPath: keyFile))
        let withP1 = try vaultCommand(["list"], password: "p1")
        XCTAssertNotEqual(withP1.status, 0, "P1 unlocks nothing: \(withP1.stdout)")
        XCTAssertEqual(withP1.stdout, "")
        let withP2 = try vaultCommand(["list"], password: "p2")
        XCTAssertEqual(withP2.status, 0, "P2 still opens the backup: \(withP2.stderr)")
        XCTAssertTrue(withP2.stderr.contains("vault.key.prev was used"), withP2.stderr)
        XCTAssertTrue(withP2.stdout.hasSuffix("1 comic\n"), withP2.stdout)
    }

    func testAnOldManifestPutBackIsRefusedAndTheNewerComicIsNeverLost() throws {
        XCTAssertEqual(try vaultCommand(["init"], password: "p1").status, 0)
        XCTAssertEqual(try vaultCommand(["add", comic("A.cbz", "Space Patrol/Space Patrol 001.cbz")], password: "p1").status, 0)
        let manifest = URL(fileURLWithPath: vault + "/manifest.bin")
        let saved = try Data(contentsOf: manifest)
        XCTAssertEqual(try vaultCommand(["add", comic("B.cb7", "Moon Tales/Moon Tales 01.cb7")], password: "p1").status, 0)
        let objects = try FileManager.default.contentsOfDirectory(atPath: vault + "/objects").sorted()
        XCTAssertEqual(objects.count, 2)
        let objectBytes = try objects.map { try Data(contentsOf: URL(fileURLWithPath: vault + "/objects/" + $0)) }

        try saved.write(to: manifest)  // the attacker puts the old manifest back
        let refused = try vaultCommand(["list"], password: "p1")
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("refusing an older vault") && refused.stderr.contains("--accept-rollback"), refused.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: vault + "/objects").sorted(), objects, "a refusal moves nothing")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: vault + "/orphans"), [])
        XCTAssertEqual(try vaultCommand(["add", comic("C.cbz", "Space Patrol/Space Patrol 001.cbz")], password: "p1").status, 2,
                       "nor does any other command save over it")

        // Accepted on purpose: A is listed, B's object kept whole in orphans/, and the report says so.
        let accepted = try vaultCommand(["list", "--accept-rollback"], password: "p1")
        XCTAssertEqual(accepted.status, 0, accepted.stderr)
        XCTAssertTrue(accepted.stdout.contains("A.cbz") && !accepted.stdout.contains("B.cb7"), accepted.stdout)
        XCTAssertTrue(accepted.stderr.contains("accepted an older vault") && accepted.stderr.contains("moved to orphans/"), accepted.stderr)
        let orphans = try FileManager.default.contentsOfDirectory(atPath: vault + "/orphans")
        XCTAssertEqual(orphans.count, 1)
        XCTAssertTrue(objectBytes.contains(try Data(contentsOf: URL(fileURLWithPath: vault + "/orphans/" + orphans[0]))), "B's object, intact")
        XCTAssertEqual(try vaultCommand(["list"], password: "p1").status, 0, "accepted once, the record follows")
    }

    func testSizesDoNotTell() throws {
        XCTAssertEqual(try vaultCommand(["init"], password: "p1").status, 0)
        let manifest = vault + "/manifest.bin"
        var manifestSizes = [try FileManager.default.attributesOfItem(atPath: manifest)[.size] as? Int]
        var objectSizes: [Int] = []
        for (name, size) in [("Known Release 001.cbz", 5_000_000), ("K.cbz", 5_001_024)] {
            let path = folder.appendingPathComponent(name).path
            // Noise behind a ZIP signature: `vault add` takes only what starts as a comic archive.
            let bytes = [0x50, 0x4B, 0x03, 0x04] + ArchiveMaker.noise(count: size - 4, seed: UInt64(size))
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            let added = try vaultCommand(["add", path], password: "p1")
            XCTAssertEqual(added.status, 0, added.stderr)
            let objects = try FileManager.default.contentsOfDirectory(atPath: vault + "/objects")
            let sizes = try objects.map { try FileManager.default.attributesOfItem(atPath: vault + "/objects/" + $0)[.size] as? Int ?? 0 }
            objectSizes = sizes.sorted()
            manifestSizes.append(try FileManager.default.attributesOfItem(atPath: manifest)[.size] as? Int)
        }
        XCTAssertEqual(objectSizes.count, 2)
        XCTAssertEqual(objectSizes[0], objectSizes[1], "5,000,000 and 5,001,024 bytes: one Padmé bucket")
        XCTAssertEqual(objectSizes[0], 56 + 78 * 28 + 5_111_808, "a 5,111,808-byte stream in 78 chunks: 2.2 % over")
        XCTAssertEqual(Set(manifestSizes), [4136], "the manifest does not grow with the names (nor tell the generation)")
    }

    /// On a machine (a state folder) that never saw this vault, nothing can refuse an older copy:
    /// the first unlock says which generation it opened and how new its newest comic is, once.
    func testTheFirstUnlockOnAnotherMachineSaysWhichGenerationItOpened() throws {
        XCTAssertEqual(try vaultCommand(["init"], password: "p1").status, 0)
        let here = try vaultCommand(["list"], password: "p1")
        XCTAssertFalse(here.stderr.contains("first unlock"), "made here, seen here: \(here.stderr)")
        XCTAssertEqual(try vaultCommand(["add", comic("A.cbz", "Space Patrol/Space Patrol 001.cbz")], password: "p1").status, 0)
        let elsewhere = ["XDG_STATE_HOME": folder.appendingPathComponent("other-machine").path]
        let arguments = ["vault", "list", "--vault", vault, "--password-file", folder.appendingPathComponent("p1").path]
        let first = try CommandRunner.inkyfs(arguments, environment: elsewhere)
        XCTAssertEqual(first.status, 0, first.stderr)
        let year = Calendar(identifier: .gregorian).component(.year, from: Date())
        XCTAssertTrue(first.stderr.contains("inkyfs: vault: first unlock of this vault here: generation 2, newest comic added \(year)-"), first.stderr)
        XCTAssertFalse(try CommandRunner.inkyfs(arguments, environment: elsewhere).stderr.contains("first unlock"), "said once")
    }
}

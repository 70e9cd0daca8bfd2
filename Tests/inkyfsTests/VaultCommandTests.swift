import Foundation
import InkyTestSupport
import XCTest

/// The vault commands that need no mount, run as a user would, with real files.
final class VaultCommandTests: XCTestCase {
    private var folder: URL!
    private var vault: String { folder.appendingPathComponent("vault").path }

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("vault-cli")
        try "correct horse\n".write(to: folder.appendingPathComponent("pw"), atomically: true, encoding: .utf8)
        try "correct horse\nbattery staple\n".write(to: folder.appendingPathComponent("change"), atomically: true, encoding: .utf8)
        try "battery staple\n".write(to: folder.appendingPathComponent("new"), atomically: true, encoding: .utf8)
        try "not it\n".write(to: folder.appendingPathComponent("wrong"), atomically: true, encoding: .utf8)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func vaultCommand(_ arguments: [String], password: String = "pw") throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments + ["--vault", vault, "--password-file", folder.appendingPathComponent(password).path])
    }

    func testAddListPasswdRemoveRoundTripsByteForByte() throws {
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
        let original = Corpus.fixture("Moon Tales/Moon Tales 01.cb7")
        let comic = folder.appendingPathComponent("Secret.cb7")
        try FileManager.default.copyItem(atPath: original, toPath: comic.path)
        let added = try vaultCommand(["add", comic.path, "--into", "Private"])
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: comic.path), "the original goes once the vault copy is verified")
        try FileManager.default.copyItem(atPath: original, toPath: comic.path)
        XCTAssertEqual(try vaultCommand(["add", comic.path, "--into", "Private", "--keep"]).status, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: comic.path), "--keep keeps it")

        let listed = try vaultCommand(["list", "--json"])
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(rows.compactMap { $0["path"] as? String }, ["Private/Secret (1).cb7", "Private/Secret.cb7"], "a second copy gets (1)")

        // Nothing readable on disk: object names are random, no name appears anywhere.
        for file in FileManager.default.enumerator(atPath: vault)!.compactMap({ $0 as? String }) {
            XCTAssertFalse(file.contains("Secret") || file.contains("Private"), file)
            if let data = FileManager.default.contents(atPath: vault + "/" + file) {
                XCTAssertNil(data.range(of: Data("Secret".utf8)), "\(file) holds a plaintext name")
            }
        }

        let wrong = try vaultCommand(["list"], password: "wrong")
        XCTAssertEqual(wrong.status, 2)
        XCTAssertEqual(wrong.stderr, "inkyfs: wrong password\n")

        XCTAssertEqual(try vaultCommand(["passwd"], password: "change").status, 0)
        XCTAssertEqual(try vaultCommand(["list"]).status, 2, "the old password no longer works")
        let out = folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let removed = try vaultCommand(["remove", "Private/Secret.cb7", "--to", out.path], password: "new")
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertEqual(try readFile(out.appendingPathComponent("Secret.cb7").path), try readFile(original))
        XCTAssertTrue(try vaultCommand(["list"], password: "new").stdout.hasSuffix("1 comic\n"))
    }

    func testStatusNeedsNoPasswordAndMissingVaultsSaySo() throws {
        XCTAssertTrue(try CommandRunner.inkyfs(["vault", "status", "--vault", vault]).stdout.contains("no vault at"))
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
        XCTAssertNotEqual(try vaultCommand(["init"]).status, 0, "never over an existing vault")
        XCTAssertTrue(try CommandRunner.inkyfs(["vault", "status", "--vault", vault]).stdout.contains("0 encrypted objects"))
    }

    /// Without the password, `status` names the manifest's generation only when it is the very
    /// manifest this user last saw (the rollback record kept outside the vault); an older copy put
    /// back is not named, and says that an unlock will check it.
    func testStatusNamesTheGenerationOnlyOfTheManifestLastSeenHere() throws {
        let environment = ["XDG_STATE_HOME": folder.appendingPathComponent("state").path]
        func run(_ arguments: [String]) throws -> CommandRunner.Result {
            try CommandRunner.inkyfs(["vault"] + arguments + ["--vault", vault, "--password-file", folder.appendingPathComponent("pw").path],
                                     environment: environment)
        }
        func status() throws -> (text: String, generation: Any?) {
            let text = try CommandRunner.inkyfs(["vault", "status", "--vault", vault], environment: environment).stdout
            let json = try CommandRunner.inkyfs(["vault", "status", "--json", "--vault", vault], environment: environment).stdout
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            XCTAssertTrue(object.keys.contains("generation"), json)
            return (text, object["generation"] is NSNull ? nil : object["generation"])
        }
        XCTAssertEqual(try run(["init"]).status, 0)
        let comic = folder.appendingPathComponent("Secret.cb7")
        try FileManager.default.copyItem(atPath: Corpus.fixture("Moon Tales/Moon Tales 01.cb7"), toPath: comic.path)
        XCTAssertEqual(try run(["add", comic.path, "--keep"]).status, 0)
        XCTAssertEqual(try run(["add", comic.path, "--keep"]).status, 0)
        let seen = try status()
        let generation = try XCTUnwrap(seen.generation as? Int, seen.text)
        XCTAssertTrue(seen.text.contains("manifest: generation \(generation), the one you last saw here"), seen.text)

        // The manifest before the last add, put back as someone who can write the folder could.
        try FileManager.default.removeItem(atPath: vault + "/manifest.bin")
        try FileManager.default.copyItem(atPath: vault + "/manifest.bin.prev", toPath: vault + "/manifest.bin")
        let older = try status()
        XCTAssertNil(older.generation, older.text)
        XCTAssertTrue(older.text.contains("manifest: not the one you last saw here"), older.text)
        XCTAssertEqual(try run(["list"]).status, 2, "and unlocking refuses it")
    }

    /// A vault whose manifest predates the folder a comic came from (Fixtures/Vault): `remove`
    /// opens it as it is and puts the comic where it did before (no mount: the current folder),
    /// saying why.
    func testRemoveOfAComicAddedBeforeTheVaultKeptItsFolderSaysWhereItGoes() throws {
        try ArchiveMaker.run("/bin/cp", ["-R", Corpus.packageRoot.appendingPathComponent("Fixtures/Vault").path, vault])
        XCTAssertEqual(chmod(vault, 0o700), 0)
        try "inkyfs-test-vault\n".write(to: folder.appendingPathComponent("fixture"), atomically: true, encoding: .utf8)
        let here = folder.appendingPathComponent("here")
        let runtime = folder.appendingPathComponent("run")
        for made in [here, runtime] { try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) }
        // A state and a runtime folder of its own: no record of the fixture's generation is moved, no running mount is found.
        let removed = try CommandRunner.capture(CommandRunner.binary.path, ["vault", "remove", "Tiny/Ten Bytes.cbz", "--vault", vault,
                                                                           "--password-file", folder.appendingPathComponent("fixture").path],
                                                in: here, environment: ["XDG_STATE_HOME": folder.appendingPathComponent("state").path,
                                                                        "XDG_RUNTIME_DIR": runtime.path])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertTrue(removed.stderr.hasSuffix("inkyfs: Tiny/Ten Bytes.cbz: added before the vault kept where comics came from; restoring it into \(here.path) (--to DIR puts it elsewhere)\n"),
                      removed.stderr)
        XCTAssertEqual(removed.stdout, "restored \(here.path)/Ten Bytes.cbz\n")
        XCTAssertEqual(try String(contentsOf: here.appendingPathComponent("Ten Bytes.cbz"), encoding: .utf8), "0123456789")
    }
}

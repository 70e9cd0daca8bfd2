import Foundation
import InkyTestSupport
import XCTest

/// Attacks on the vault folder by someone (or a sync tool) who can write it, through the real
/// commands: a symlinked `orphans/`, a file that is not ours dropped into `objects/`, a FIFO
/// planted as an object, a folder open to everyone.
final class VaultFolderTests: XCTestCase {
    private var folder: URL!
    private var vault: String { folder.appendingPathComponent("vault").path }
    private let files = FileManager.default

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("vault-folder")
        try "pass\n".write(to: folder.appendingPathComponent("password"), atomically: true, encoding: .utf8)
    }

    override func tearDown() { try? files.removeItem(at: folder) }

    /// `inkyfs vault ...` under `timeout`: a command that hangs (on a FIFO) ends with 124.
    private func vaultCommand(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.capture("/usr/bin/timeout", ["20", CommandRunner.binary.path, "vault"] + arguments
                                    + ["--vault", vault, "--password-file", folder.appendingPathComponent("password").path],
                                  environment: ["XDG_STATE_HOME": folder.appendingPathComponent("state").path])
    }

    private func addComic() throws {
        let comic = folder.appendingPathComponent("A.cbz").path
        try files.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), toPath: comic)
        let added = try vaultCommand(["add", comic])
        XCTAssertEqual(added.status, 0, added.stderr)
    }

    private func mode(_ path: String) throws -> Int {
        try XCTUnwrap(files.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    func testASymlinkedOrphansFolderIsRefusedAndNothingIsPlantedThroughIt() throws {
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
        let autostart = folder.appendingPathComponent("autostart").path
        try files.createDirectory(atPath: autostart, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try files.removeItem(atPath: vault + "/orphans")
        try files.createSymbolicLink(atPath: vault + "/orphans", withDestinationPath: autostart)
        try "[Desktop Entry]\nExec=evil\n".write(toFile: vault + "/objects/evil.desktop", atomically: false, encoding: .utf8)
        let orphanName = String(repeating: "ab", count: 16)  // named as an object, listed nowhere
        try "ciphertext".write(toFile: vault + "/objects/" + orphanName, atomically: false, encoding: .utf8)

        let refused = try vaultCommand(["list"])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("\(vault)/orphans: refusing an unsafe vault folder: is a symbolic link"), refused.stderr)
        XCTAssertEqual(try files.contentsOfDirectory(atPath: autostart), [], "nothing planted through the link")
        XCTAssertEqual(try files.contentsOfDirectory(atPath: vault + "/objects").sorted(), [orphanName, "evil.desktop"])

        // A real orphans/ again: the object-named file is swept, the foreign one left where it is.
        try files.removeItem(atPath: vault + "/orphans")
        try files.createDirectory(atPath: vault + "/orphans", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let listed = try vaultCommand(["list"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertTrue(listed.stderr.contains("1 name in objects/ that inkyfs never writes, left untouched: evil.desktop"), listed.stderr)
        XCTAssertTrue(listed.stderr.contains("moved to orphans/ (kept, never deleted): \(orphanName)"), listed.stderr)
        XCTAssertEqual(try files.contentsOfDirectory(atPath: vault + "/orphans"), [orphanName])
        XCTAssertEqual(try files.contentsOfDirectory(atPath: vault + "/objects"), ["evil.desktop"])
        XCTAssertEqual(try files.contentsOfDirectory(atPath: autostart), [])
    }

    func testASymlinkedObjectsFolderOrVaultFolderIsRefused() throws {
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
        try files.moveItem(atPath: vault + "/objects", toPath: folder.appendingPathComponent("elsewhere").path)
        try files.createSymbolicLink(atPath: vault + "/objects", withDestinationPath: folder.appendingPathComponent("elsewhere").path)
        let refused = try vaultCommand(["list"])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("\(vault)/objects: refusing an unsafe vault folder: is a symbolic link"), refused.stderr)

        let linked = folder.appendingPathComponent("linked").path
        try files.createSymbolicLink(atPath: linked, withDestinationPath: vault)
        let viaLink = try CommandRunner.inkyfs(["vault", "list", "--vault", linked, "--password-file", folder.appendingPathComponent("password").path],
                                               environment: ["XDG_STATE_HOME": folder.appendingPathComponent("state").path])
        XCTAssertEqual(viaLink.status, 2, viaLink.stderr)
        XCTAssertTrue(viaLink.stderr.contains("\(linked): refusing an unsafe vault folder: is a symbolic link; a vault folder is never followed"
                                              + " through a link (name the folder it points to)"), viaLink.stderr)
    }

    func testAFIFOPlantedAsAnObjectFailsQuicklyInsteadOfHanging() throws {
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
        try addComic()
        let object = try XCTUnwrap(files.contentsOfDirectory(atPath: vault + "/objects").first)
        try files.removeItem(atPath: vault + "/objects/" + object)
        XCTAssertEqual(mkfifo(vault + "/objects/" + object, 0o600), 0)

        let removed = try vaultCommand(["remove", "A.cbz", "--to", folder.path])
        XCTAssertEqual(removed.status, 1, "not 124 (hung on the FIFO): \(removed.stderr)")
        XCTAssertTrue(removed.stderr.contains("not a regular file") && removed.stderr.contains("it is still in the vault"), removed.stderr)
        XCTAssertTrue(removed.stderr.contains("1 comic without an object in objects/"), "the FIFO is no object: \(removed.stderr)")
    }

    func testInitMakesAnOpenFolderPrivateAndUnlockRefusesOneWritableByOthers() throws {
        try files.createDirectory(atPath: vault, withIntermediateDirectories: false)
        XCTAssertEqual(chmod(vault, 0o777), 0)
        let created = try vaultCommand(["init"])
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertEqual(try mode(vault), 0o700, "vault init closes the folder it is given")
        for inner in ["objects", "orphans"] { XCTAssertEqual(try mode(vault + "/" + inner), 0o700) }

        XCTAssertEqual(chmod(vault, 0o777), 0)
        let refused = try vaultCommand(["list"])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("\(vault): refusing an unsafe vault folder: writable by everyone (mode 777) (fix: chmod 700 \(vault))"),
                      refused.stderr)
        let doctor = try CommandRunner.inkyfs(["doctor", "--vault", vault])
        XCTAssertTrue(doctor.stdout.contains("FAILED   vault        \(vault) is writable by others (mode 777); unlocking refuses it  fix: chmod 700 \(vault)"),
                      doctor.stdout)

        XCTAssertEqual(chmod(vault, 0o755), 0)
        let warned = try vaultCommand(["list"])
        XCTAssertEqual(warned.status, 0, warned.stderr)
        XCTAssertTrue(warned.stderr.contains("the vault folder \(vault) is mode 755; others on this machine can see its files (fix: chmod 700 \(vault))"),
                      warned.stderr)
        XCTAssertEqual(chmod(vault, 0o700), 0)
        XCTAssertEqual(try vaultCommand(["list"]).stderr, "")
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// Lock while a reader still holds a vault page open, then unlock: the comic is there again.
/// `Vault/` keeps its number across lock and unlock, so the kernel can bring back its old
/// directory entry (the open file keeps it alive) with the old names in it; each pointed at a
/// number the lock dropped, and the comic answered ENOENT until its entry timed out (seen under
/// load in MountChurnStressTests). Lock now unhashes every name under `Vault/`.
final class MountVaultRelockTests: XCTestCase {
    func testAComicHeldOpenAcrossLockAndUnlockIsThereAgainAfterUnlock() throws {
        let folder = ArchiveMaker.temporaryDirectory("vault-relock")
        defer { try? FileManager.default.removeItem(at: folder) }
        let library = folder.appendingPathComponent("library"), vault = folder.appendingPathComponent("vault").path
        let password = folder.appendingPathComponent("pw").path
        let environment = ["XDG_RUNTIME_DIR": folder.appendingPathComponent("run").path]
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("run"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try "sesame\n".write(toFile: password, atomically: true, encoding: .utf8)
        func inkyfs(_ arguments: [String]) throws -> CommandRunner.Result {
            try CommandRunner.inkyfs(arguments, environment: environment)
        }
        XCTAssertEqual(try inkyfs(["vault", "init", "--vault", vault, "--password-file", password]).status, 0)
        let source = folder.appendingPathComponent("Held Open.cbz").path
        try FileManager.default.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), toPath: source)
        XCTAssertEqual(try inkyfs(["vault", "add", source, "--vault", vault, "--password-file", password]).status, 0)

        let mount = try MountedLibrary(library: library, arguments: ["--vault", vault, "--vault-idle", "0"], environment: environment)
        XCTAssertEqual(try inkyfs(["vault", "unlock", mount.mountpoint.path, "--password-file", password]).status, 0)
        let comic = mount.path("Vault/Held Open")
        let pages = try FileManager.default.contentsOfDirectory(atPath: comic).sorted()
        XCTAssertFalse(pages.isEmpty)
        let first = try readFile(comic + "/" + pages[0])
        let held = open(comic + "/" + pages[0], O_RDONLY)
        XCTAssertGreaterThanOrEqual(held, 0)
        defer { close(held) }

        XCTAssertEqual(try inkyfs(["vault", "lock", mount.mountpoint.path]).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Vault")), "locked: no Vault/")
        XCTAssertEqual(try inkyfs(["vault", "unlock", mount.mountpoint.path, "--password-file", password]).status, 0)

        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: comic).sorted(), pages, "the comic lists its pages again")
        XCTAssertEqual(try readFile(comic + "/" + pages[0]), first)
        var info = stat()
        XCTAssertEqual(fstat(held, &info), -1, "the page opened before the lock stays dead")
        XCTAssertEqual(errnoName(errno), errnoName(EIO), "the page opened before the lock stays dead")
        XCTAssertTrue(mount.isDaemonAlive)
    }
}

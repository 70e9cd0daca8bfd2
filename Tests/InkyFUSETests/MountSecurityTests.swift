import Foundation
import InkyTestSupport
import XCTest

/// Who may see what: other users and the mount, the vault under `-o allow_other`, the control
/// socket, and what a worker process is allowed. "Another user" is nobody (65534), run through
/// setpriv with no supplementary groups.
final class MountSecurityTests: XCTestCase {
    private func asNobody(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> CommandRunner.Result {
        try CommandRunner.capture("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", executable] + arguments,
                                  environment: environment)
    }

    func testWithoutAllowOtherNoOtherUserCanEvenLookAtTheMount() throws {
        let fixture = try VaultMountFixture()
        let root = fixture.mount.mountpoint.path
        // The way there is open to nobody (so the refusal below is the mount's own)…
        XCTAssertEqual(try asNobody("/usr/bin/stat", ["-c", "%a", (root as NSString).deletingLastPathComponent]).status, 0)
        // …and the kernel refuses every other user at the mount itself.
        for path in [root, fixture.path("Space Patrol"), fixture.path("Space Patrol/Space Patrol 001/001.jpg")] {
            let seen = try asNobody("/usr/bin/stat", ["-c", "%i", path])
            XCTAssertNotEqual(seen.status, 0, path)
            XCTAssertTrue(seen.stderr.contains("Permission denied"), seen.stderr)
        }
        XCTAssertNotEqual(try asNobody("/bin/cat", [fixture.path("Space Patrol/Space Patrol 001/001.jpg")]).status, 0)
        XCTAssertNotNil(SystemCall.status(fixture.path("Space Patrol/Space Patrol 001/001.jpg")), "the owner sees it")
    }

    func testWithAllowOtherOthersReadTheLibraryButTheVaultStaysTheOwners() throws {
        let fixture = try VaultMountFixture(mountArguments: ["-o", "allow_other"])
        try fixture.unlock()
        let page = "Space Patrol/Space Patrol 001/001.jpg"
        let vaultPage = "Vault/Secret Series/Moon Tales 01/001.jpg"
        let read = try asNobody("/usr/bin/sha256sum", [fixture.path(page)])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertTrue(read.stdout.hasPrefix(Digest.sha256Hex(try readFile(fixture.path(page)))), "others read the library")

        // Owned by the mounting user, 0500 and 0400: nobody cannot list or read any of it.
        for (relative, mode) in [("Vault", 0o500), ("Vault/Secret Series", 0o500), ("Vault/Secret Series/Moon Tales 01", 0o500), (vaultPage, 0o400)] {
            let info = try XCTUnwrap(SystemCall.status(fixture.path(relative)), relative)
            XCTAssertEqual(Int(info.st_mode & 0o777), mode, relative)
            XCTAssertEqual(info.st_uid, getuid(), relative)
        }
        XCTAssertEqual(try asNobody("/usr/bin/stat", ["-c", "%a %u", fixture.path("Vault")]).stdout, "500 \(getuid())\n")
        for command in [["/bin/ls", fixture.path("Vault")], ["/bin/cat", fixture.path(vaultPage)],
                        ["/usr/bin/stat", fixture.path("Vault/Secret Series")]] {
            let refused = try asNobody(command[0], Array(command.dropFirst()))
            XCTAssertNotEqual(refused.status, 0, command.joined(separator: " "))
            XCTAssertTrue(refused.stderr.contains("Permission denied"), refused.stderr)
        }
        XCTAssertEqual(try readFile(fixture.path(vaultPage)).count, 35199, "the owner reads it")
    }

    func testVaultAllowOtherOpensTheVaultToOthersToo() throws {
        let fixture = try VaultMountFixture(mountArguments: ["-o", "allow_other", "--vault-allow-other"])
        try fixture.unlock()
        let vaultPage = "Vault/Secret Series/Moon Tales 01/001.jpg"
        XCTAssertEqual(SystemCall.status(fixture.path(vaultPage)).map { Int($0.st_mode & 0o777) }, 0o444)
        XCTAssertEqual(SystemCall.status(fixture.path("Vault")).map { Int($0.st_mode & 0o777) }, 0o555)
        let read = try asNobody("/usr/bin/sha256sum", [fixture.path(vaultPage)])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertTrue(read.stdout.hasPrefix(Digest.sha256Hex(try readFile(fixture.path(vaultPage)))))
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs vault lock` with several mounts running locks the vault wherever it is unlocked,
/// instead of asking which mount: locking is never the wrong thing to do.
final class VaultLockEveryMountTests: XCTestCase {
    func testLockWithoutAMountpointLocksTheUnlockedOneAmongSeveral() throws {
        let fixture = try VaultMountFixture()
        let other = try MountedLibrary(library: Corpus.fixtures, arguments: ["--vault", fixture.folder.appendingPathComponent("no-vault").path],
                                       environment: fixture.environment)
        defer { other.unmount() }
        try fixture.unlock()
        XCTAssertTrue(FileManager.default.fileExists(atPath: fixture.path("Vault")))
        let status = try CommandRunner.inkyfs(["status"], environment: fixture.environment).stdout
        XCTAssertTrue(status.contains("\(other.mountpoint.path)  \(Corpus.fixtures.path)  pid \(other.process.processIdentifier)  no vault"), status)
        XCTAssertTrue(status.contains("\(fixture.mount.mountpoint.path)  \(fixture.library.path)  pid \(fixture.mount.process.processIdentifier)"
                                      + "  vault unlocked, locks itself in "), status)

        let locked = try fixture.vaultControl(["lock"])
        XCTAssertEqual(locked.status, 0, locked.stderr)
        XCTAssertEqual(locked.stdout, "\(fixture.mount.mountpoint.path): vault locked\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.path("Vault")), "the vault folder is gone")

        // None unlocked now: each mount says so, and nothing fails.
        let again = try fixture.vaultControl(["lock"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(Set(again.stdout.split(separator: "\n").map(String.init)),
                       Set([fixture.mount.mountpoint.path, other.mountpoint.path].map { "\($0): the vault was already locked" }))
    }
}

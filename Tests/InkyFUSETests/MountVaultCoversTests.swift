import Foundation
import InkyTestSupport
import XCTest

/// Covers of the unlocked vault: its series folder lists `folder.jpg` (made in the background,
/// from memory) and `.directory`, its comics `.directory`; nothing of them reaches the disk
/// cache of covers, and lock wipes them.
final class MountVaultCoversTests: XCTestCase {
    func testVaultCoversComeFromMemoryOnlyAndGoAtLock() throws {
        let fixture = try VaultMountFixture(covers: true)
        let mount = fixture.mount!
        try fixture.unlock()
        let series = fixture.path("Vault/Secret Series")
        let deadline = Date().addingTimeInterval(30)
        while !((try? FileManager.default.contentsOfDirectory(atPath: series)) ?? []).contains("folder.jpg"), Date() < deadline {
            usleep(20_000)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: series).sorted(), ["Moon Tales 01", "folder.jpg"],
                       mount.logText)
        let cover = try readFile(fixture.path("Vault/Secret Series/folder.jpg"))
        XCTAssertEqual(statSize(fixture.path("Vault/Secret Series/folder.jpg")), Int64(cover.count))
        let seen = try ArchiveMaker.run("/usr/bin/python3", ["-c", """
            import sys
            from PIL import Image
            image = Image.open(sys.argv[1])
            image.load()
            print(image.format, image.size[1])
            """, fixture.path("Vault/Secret Series/folder.jpg")]).split(separator: " ")
        XCTAssertEqual(seen.first, "JPEG")
        XCTAssertLessThanOrEqual(Int(seen.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 9999, 600)
        XCTAssertEqual(String(decoding: try readFile(fixture.path("Vault/Secret Series/.directory")), as: UTF8.self),
                       "[Desktop Entry]\nIcon=./folder.jpg\n")
        XCTAssertEqual(String(decoding: try readFile(fixture.path("Vault/Secret Series/Moon Tales 01/.directory")), as: UTF8.self),
                       "[Desktop Entry]\nIcon=./001.jpg\n")
        // Nothing of the vault's covers on disk: no file in the cover cache (the library was not listed).
        let cache = mount.stateHome.appendingPathComponent("cache/inkyfs/covers").path
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? [], [])

        let locked = try fixture.vaultControl(["lock"])
        XCTAssertEqual(locked.status, 0, locked.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.path("Vault/Secret Series/folder.jpg")))
        XCTAssertTrue(mount.logSays("vault locked: 1 covers wiped from memory"), mount.logText)
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? [], [])
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// The unlocked vault's own metadata views: `Vault/By Series/<Series>/` and the rest list the
/// vault's tagged comics through links into `Vault/`, the library's views never list them, their
/// tags reach neither the state database (file, WAL, shared memory) nor the log, and lock takes
/// the views away with the vault.
final class MountVaultViewsTests: XCTestCase {
    private let secrets = ["Umbral Covenant", "Hushed Press", "Eclipse Pact"]

    func testTheVaultShowsItsOwnViewsWhileUnlockedAndItsTagsStayInMemory() throws {
        let fixture = try VaultMountFixture(views: true)
        let sources = fixture.folder.appendingPathComponent("private")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        for number in [2, 1] {
            let comic = sources.appendingPathComponent("uc \(number).cbz")
            let info = "<ComicInfo><Series>Umbral Covenant</Series><Number>\(number)</Number><Publisher>Hushed Press</Publisher>"
                + "<StoryArc>Eclipse Pact</StoryArc><StoryArcNumber>\(3 - number)</StoryArcNumber></ComicInfo>"
            try ArchiveMaker.zip(at: comic, members: [("ComicInfo.xml", Array(info.utf8)),
                                                      ("001.jpg", ArchiveMaker.noise(count: 700, seed: UInt64(number)))])
            let added = try fixture.vaultCommand(["add", comic.path, "--into", "Private"])
            XCTAssertEqual(added.status, 0, added.stderr)
        }
        try fixture.unlock()

        let series = fixture.path("Vault/By Series/Umbral Covenant")
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: series) && Date() < deadline { usleep(50_000) }
        XCTAssertEqual(try ArchiveMaker.run("/bin/ls", ["-A", series]), "001 Umbral Covenant #1\n002 Umbral Covenant #2\n")
        for (link, comic) in [("001 Umbral Covenant #1", "uc 1"), ("002 Umbral Covenant #2", "uc 2")] {
            XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: series + "/" + link), "../../Private/\(comic)")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: series + "/" + link).sorted(), [".ComicInfo.xml", "001.jpg"],
                           "resolves inside Vault/")
            XCTAssertEqual(try readFile(series + "/" + link + "/001.jpg"), try readFile(fixture.path("Vault/Private/\(comic)/001.jpg")))
        }
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: fixture.path("Vault/By Publisher/Hushed Press/Umbral Covenant")),
                       "../../By Series/Umbral Covenant")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("Vault/By Publisher/Hushed Press/Umbral Covenant")).sorted(),
                       ["001 Umbral Covenant #1", "002 Umbral Covenant #2"])
        // The arc's order is StoryArcNumber's: #2 is its first part.
        XCTAssertEqual(try ArchiveMaker.run("/bin/ls", ["-A", fixture.path("Vault/Story Arcs/Eclipse Pact")]),
                       "001 Umbral Covenant #2\n002 Umbral Covenant #1\n")
        XCTAssertTrue(try ArchiveMaker.run("/bin/ls", ["-A", fixture.path("Vault/Recently Added")]).contains("Umbral Covenant #1"))

        // The library's views (at the mount root) know nothing of them.
        let libraryViews = try ArchiveMaker.run("/usr/bin/find", ["By Series", "By Publisher", "Story Arcs", "Recently Added"]
            .filter { FileManager.default.fileExists(atPath: fixture.path($0)) }.map { fixture.path($0) })
        XCTAssertFalse(libraryViews.isEmpty)
        for secret in secrets { XCTAssertFalse(libraryViews.contains(secret), "a library view lists \(secret)") }
        try assertSecretsAbsent(fixture, "while unlocked")

        XCTAssertEqual(try CommandRunner.inkyfs(["vault", "lock", fixture.mount.mountpoint.path], environment: fixture.environment).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.path("Vault")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: series), "gone with the lock")
        try assertSecretsAbsent(fixture, "after lock")
    }

    /// Every file of the state folder (state.sqlite, -wal, -shm) and the daemon's log.
    private func assertSecretsAbsent(_ fixture: VaultMountFixture, _ when: String) throws {
        var checked: [String] = []
        for folder in [fixture.state, fixture.mount.stateHome] {
            guard let walker = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let relative as String in walker {
                guard let bytes = FileManager.default.contents(atPath: folder.appendingPathComponent(relative).path) else { continue }
                checked.append(relative)
                for secret in secrets { XCTAssertNil(bytes.range(of: Data(secret.utf8)), "\(when): \(relative) holds \(secret)") }
            }
        }
        XCTAssertTrue(checked.contains("state.sqlite") && checked.contains("state.sqlite-wal"), "\(when): \(checked)")
        for secret in secrets { XCTAssertFalse(fixture.mount.logText.contains(secret), "\(when): the log names \(secret)") }
    }
}

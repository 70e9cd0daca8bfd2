import Foundation
import InkyTestSupport
import XCTest

/// A comic read through the mount and then moved into the vault leaves no trace of its name in
/// plaintext: not in the state database, not in its WAL, not in any log.
final class MountVaultPrivacyTests: XCTestCase {
    private let secret = "Nightshade Confidential"

    func testAComicMovedIntoTheVaultLeavesItsNameNowhere() throws {
        let folder = ArchiveMaker.temporaryDirectory("vault-privacy")
        defer { try? FileManager.default.removeItem(at: folder) }
        let library = folder.appendingPathComponent("library"), state = folder.appendingPathComponent("state")
        let vault = folder.appendingPathComponent("vault").path, password = folder.appendingPathComponent("pw").path
        let environment = ["XDG_RUNTIME_DIR": folder.appendingPathComponent("run").path]
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("run"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        let comic = library.appendingPathComponent("\(secret).cbz").path
        try FileManager.default.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), toPath: comic)
        try "sesame\n".write(toFile: password, atomically: true, encoding: .utf8)
        func inkyfs(_ arguments: [String]) throws -> CommandRunner.Result {
            try CommandRunner.inkyfs(arguments, environment: environment)
        }
        XCTAssertEqual(try inkyfs(["vault", "init", "--vault", vault, "--password-file", password]).status, 0)

        let mount = try MountedLibrary(library: library, arguments: ["--vault", vault, "--state", state.path], environment: environment)
        for page in ["001.jpg", "002.jpg", "003.jpg"] { _ = try readFile(mount.path("\(secret)/\(page)")) }
        let firstEntry = try attribute("user.inkyfs.source", mount.path("\(secret)/001.jpg"))
        XCTAssertEqual(try inkyfs(["bookmark", "add", comic, "2", "--state", state.path]).status, 0)
        // The reading row is written on the daemon's state queue: wait until it is there.
        let deadline = Date().addingTimeInterval(10)
        while !(try inkyfs(["progress", "--json", "--state", state.path]).stdout.contains(secret)) && Date() < deadline { usleep(50_000) }
        XCTAssertTrue(try inkyfs(["progress", "--json", "--state", state.path]).stdout.contains(secret), "the name was in the state first")

        let added = try inkyfs(["vault", "add", comic, "--into", "Private", "--vault", vault, "--password-file", password, "--state", state.path])
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertTrue(added.stderr.contains("may stay on the disk"), "vault add says what it cannot erase: \(added.stderr)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: comic))
        XCTAssertFalse(try inkyfs(["progress", "--all", "--json", "--state", state.path]).stdout.contains(secret))
        try assertNameAbsent(in: state, mount: mount, "after vault add")

        // Read inside the vault, then lock: still nowhere, the log included.
        XCTAssertEqual(try inkyfs(["vault", "unlock", mount.mountpoint.path, "--password-file", password]).status, 0)
        // The page inside the vault is its entry as Python's zipfile reads it from the original.
        XCTAssertEqual(try readFile(mount.path("Vault/Private/\(secret)/001.jpg")),
                       try ReferenceArchive.member(firstEntry, of: Corpus.fixture("Space Patrol/Space Patrol 001.cbz")))
        _ = try? readFile(mount.path("Vault/Private/\(secret)/999.jpg"))
        XCTAssertEqual(try inkyfs(["vault", "lock", mount.mountpoint.path]).status, 0)
        try assertNameAbsent(in: state, mount: mount, "after reading it in the vault")
        XCTAssertEqual(mount.unmount(), 0)
        XCTAssertTrue(mount.logText.contains("unmounted \(mount.mountpoint.path)"), "the log is whole, to its last line: \(mount.logText)")
        try assertNameAbsent(in: state, mount: mount, "after unmount")
    }

    /// Every file of the state folder (state.sqlite, -wal, -shm, logs) and the daemon's log.
    private func assertNameAbsent(in state: URL, mount: MountedLibrary, _ when: String) throws {
        let names = [secret, "Nightshade"].map { Data($0.utf8) }
        var checked: [String] = []
        for folder in [state, mount.stateHome] {
            guard let walker = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let relative as String in walker {
                let path = folder.appendingPathComponent(relative).path
                guard let bytes = FileManager.default.contents(atPath: path) else { continue }
                checked.append(relative)
                for name in names { XCTAssertNil(bytes.range(of: name), "\(when): \(relative) holds the name") }
            }
        }
        XCTAssertTrue(checked.contains("state.sqlite"), "\(when): \(checked)")
        XCTAssertFalse(mount.logText.contains("Nightshade"), "\(when): the log names it: \(mount.logText)")
    }
}

import Foundation
import InkyArchive
import InkyTestSupport
import XCTest

/// The vault under a real mount: unlocked through the control socket, read through the kernel,
/// locked again with nothing left behind.
final class MountVaultTests: XCTestCase {
    private var folder: URL!
    private var environment: [String: String] { ["XDG_RUNTIME_DIR": folder.appendingPathComponent("run").path] }
    private var vault: String { folder.appendingPathComponent("vault").path }

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("vault-mount")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("run"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("library"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"),
                                        toPath: folder.appendingPathComponent("library/Public.cbz").path)
        try "sesame\n".write(to: folder.appendingPathComponent("pw"), atomically: true, encoding: .utf8)
        try "guess\n".write(to: folder.appendingPathComponent("bad"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
        // Moved in from a folder of their own, where `vault remove` puts them back.
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        for comic in ["Moon Tales/Moon Tales 01.cb7", "Real/Captain Science 001.cbr"] {
            let copy = incoming.appendingPathComponent((comic as NSString).lastPathComponent).path
            try FileManager.default.copyItem(atPath: Corpus.fixture(comic), toPath: copy)
            let added = try vaultCommand(["add", copy, "--into", "Secret Series"])
            XCTAssertEqual(added.status, 0, added.stderr)
        }
    }

    private var incoming: URL { folder.appendingPathComponent("incoming") }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func vaultCommand(_ arguments: [String], password: String = "pw") throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments + ["--vault", vault, "--password-file", folder.appendingPathComponent(password).path],
                                 environment: environment)
    }

    private func control(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments, environment: environment)
    }

    func testUnlockShowsTheVaultReadsExactPagesAndLockLeavesNothing() throws {
        let state = folder.appendingPathComponent("state")
        let mount = try MountedLibrary(library: folder.appendingPathComponent("library"),
                                       arguments: ["--vault", vault, "--state", state.path], environment: environment)
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Vault")), "locked: no Vault/")

        let wrong = try control(["unlock", mount.mountpoint.path, "--password-file", folder.appendingPathComponent("bad").path])
        XCTAssertEqual(wrong.status, 2)
        XCTAssertEqual(wrong.stderr, "inkyfs: wrong password\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Vault")))

        let unlocked = try control(["unlock", "--password-file", folder.appendingPathComponent("pw").path])
        XCTAssertEqual(unlocked.status, 0, unlocked.stderr)
        // Where the vault is now shown, and when it locks itself (a line about the unlock may come between).
        let said = unlocked.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(said.first, "vault unlocked: 2 comics, shown in \(mount.mountpoint.path)/Vault/", unlocked.stdout)
        XCTAssertEqual(said.last, "it locks itself after 15 minutes without use; lock it now with: inkyfs vault lock", unlocked.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Vault/Secret Series")).sorted(),
                       ["Captain Science 001", "Moon Tales 01"])
        for (comic, directory) in [("Moon Tales/Moon Tales 01.cb7", "Moon Tales 01"), ("Real/Captain Science 001.cbr", "Captain Science 001")] {
            let reader = try ComicOpener.open(Corpus.fixture(comic))
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Vault/Secret Series/\(directory)")).sorted(),
                           reader.listing.pages.map(\.name))
            for page in reader.listing.pages {
                // The bytes as 7-Zip or bsdtar extract the entry from the plain archive: not inkyfs's reader.
                XCTAssertEqual(try readFile(mount.path("Vault/Secret Series/\(directory)/\(page.name)")),
                               try ReferenceArchive.member(page.sourcePath, of: Corpus.fixture(comic)), "\(comic) \(page.name)")
            }
        }

        // An open vault page, then lock: the folder goes, the open file reads nothing more.
        let open = try XCTUnwrap(FileHandle(forReadingAtPath: mount.path("Vault/Secret Series/Moon Tales 01/010.jpg")))
        let locked = try control(["lock"])
        XCTAssertEqual(locked.status, 0, locked.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Vault")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Vault/Secret Series/Moon Tales 01/001.jpg")))
        XCTAssertEqual(errnoName(readErrno(descriptor: open.fileDescriptor)), errnoName(EIO), "an open vault file reads EIO after lock (README)")
        try? open.close()
        XCTAssertEqual(errnoName(readErrno(mount.path("Vault/Secret Series/Moon Tales 01/001.jpg"))), errnoName(ENOENT), "vault names answer ENOENT after lock")
        // Through the daemon's debug report: no decrypted page cached, no key buffer alive, the
        // pages read before zeroed when lock dropped them (a 7z and a RAR: none decrypted by
        // the daemon itself).
        let report = try control(["debug"]).stdout
        XCTAssertTrue(report.hasPrefix("unlocked=false cachedVaultPages=0 liveKeyBuffers=0 keysInWorkers=0 pagesDecryptedInDaemon=0 wipedVaultPages="), report)
        XCTAssertTrue(report.hasSuffix(" wipedVaultPagesShared=0\n"), report)
        XCTAssertFalse(report.contains("wipedVaultPages=0 "), "the pages read were cached, and wiped at lock: \(report)")

        _ = try readFile(mount.path("Public/001.jpg"))

        XCTAssertEqual(try control(["unlock", "--password-file", folder.appendingPathComponent("pw").path]).status, 0, "unlocks again")
        XCTAssertTrue(try control(["debug"]).stdout.hasPrefix("unlocked=true"), "the report reflects the state")
        XCTAssertEqual(try readFile(mount.path("Vault/Secret Series/Captain Science 001/001.jpg")).count, 4542)
        XCTAssertTrue(mount.isDaemonAlive)

        // Names of vault comics reach neither the state database nor the log: checked once the
        // daemon has exited, its state written and its log drained, so nothing can come later.
        XCTAssertEqual(mount.unmount(), 0)
        XCTAssertTrue(mount.logText.contains("unmounted \(mount.mountpoint.path)"), "the log is whole, to its last line: \(mount.logText)")
        for file in (try FileManager.default.contentsOfDirectory(atPath: state.path)) {
            let bytes = try Data(contentsOf: state.appendingPathComponent(file))
            for secret in ["Secret Series", "Moon Tales", "Captain Science"] {
                XCTAssertNil(bytes.range(of: Data(secret.utf8)), "\(file) mentions \(secret)")
            }
        }
        for secret in ["Secret Series", "Moon Tales", "Captain Science"] { XCTAssertFalse(mount.logText.contains(secret), mount.logText) }
    }

    func testTheVaultLocksItselfWhenIdleButNeverUnderAnOpenFile() throws {
        // A notify-send of our own on PATH records what the daemon would show on the desktop.
        let bin = folder.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let notified = folder.appendingPathComponent("notified")
        try "#!/bin/sh\nprintf '%s\\n' \"$@\" > '\(notified.path)'\n".write(to: bin.appendingPathComponent("notify-send"), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin.appendingPathComponent("notify-send").path)
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let mount = try MountedLibrary(library: folder.appendingPathComponent("library"),
                                       arguments: ["--vault", vault, "--vault-idle", "2s", "--state", folder.appendingPathComponent("state").path],
                                       environment: environment.merging(["PATH": path]) { $1 })
        XCTAssertEqual(try control(["unlock", "--password-file", folder.appendingPathComponent("pw").path]).status, 0)
        let page = mount.path("Vault/Secret Series/Moon Tales 01/001.jpg")
        let open = try XCTUnwrap(FileHandle(forReadingAtPath: page))
        Thread.sleep(forTimeInterval: 3.5)
        XCTAssertTrue(FileManager.default.fileExists(atPath: mount.path("Vault")), "an open vault file keeps it unlocked")
        XCTAssertEqual(try open.read(upToCount: 1 << 20)?.count, try readFile(page).count)
        try open.close()
        let deadline = Date().addingTimeInterval(6)
        while FileManager.default.fileExists(atPath: mount.path("Vault")) && Date() < deadline { usleep(100_000) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Vault")), "locked after 2 s without use")
        let logged = Date().addingTimeInterval(3)
        while !mount.logText.contains("vault locked after 2 s without use") && Date() < logged { usleep(50_000) }
        XCTAssertTrue(mount.logText.contains("vault locked after 2 s without use"), mount.logText)
        let shown = Date().addingTimeInterval(5)
        while (try? String(contentsOf: notified, encoding: .utf8))?.contains("inkyfs vault unlock") != true && Date() < shown { usleep(50_000) }
        let notification = try String(contentsOf: notified, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(notification.first, "--app-name=inkyfs")
        XCTAssertTrue(notification.contains("inkyfs: vault locked"), "\(notification)")
        XCTAssertTrue(try control(["unlock", "--password-file", folder.appendingPathComponent("pw").path]).stdout.contains("vault unlocked"))
    }

    /// `inkyfs vault COMMAND ARGUMENTS --vault VAULT` with nothing to read a password from (stdin
    /// empty, no file): what it says before it would ask for one.
    private func withoutPassword(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.capture("/bin/sh", ["-c", "exec \"$0\" \"$@\" </dev/null", CommandRunner.binary.path, "vault"] + arguments + ["--vault", vault],
                                  environment: environment)
    }

    func testStatusShowsTheMountAndRemovePutsComicsBackWhereTheyCameFrom() throws {
        let library = folder.appendingPathComponent("library")
        let mount = try MountedLibrary(library: library, arguments: ["--vault", vault, "--state", folder.appendingPathComponent("state").path],
                                       environment: environment)
        XCTAssertTrue(try vaultCommand(["status"]).stdout.contains("mount \(mount.mountpoint.path): vault locked"))
        XCTAssertEqual(try control(["unlock", "--password-file", folder.appendingPathComponent("pw").path]).status, 0)
        XCTAssertTrue(try vaultCommand(["status"]).stdout.contains("vault unlocked"))
        let status = try JSONSerialization.jsonObject(with: Data(try vaultCommand(["status", "--json"]).stdout.utf8)) as? [String: Any]
        let mounts = try XCTUnwrap(status?["mounts"] as? [[String: Any]])
        XCTAssertEqual(mounts.map { $0["mountpoint"] as? String }, [mount.mountpoint.path])
        XCTAssertEqual(mounts.map { $0["library"] as? String }, [library.path])
        XCTAssertEqual(mounts.map { $0["unlocked"] as? Bool }, [true])
        // The mount holds the vault unlocked: each command says so before it asks for a password.
        let another = folder.appendingPathComponent("Another.cbz")
        try FileManager.default.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 002.cbz"), toPath: another.path)
        for arguments in [["add", another.path], ["remove", "Secret Series/Captain Science 001.cbr"], ["list"], ["passwd"]] {
            let held = try withoutPassword(arguments)
            XCTAssertEqual(held.status, 2, "\(arguments)")
            XCTAssertEqual(held.stderr, "inkyfs: the vault is unlocked by the mount at \(mount.mountpoint.path); lock it first: inkyfs vault lock\n",
                           "\(arguments)")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: another.path))
        XCTAssertEqual(try control(["lock"]).status, 0)

        // A --to folder that is not there: said before the password too.
        let nowhere = folder.appendingPathComponent("nowhere").path
        let missing = try withoutPassword(["remove", "Secret Series/Moon Tales 01.cb7", "--to", nowhere])
        XCTAssertEqual(missing.status, 2)
        XCTAssertEqual(missing.stderr, "inkyfs: --to \(nowhere): no such folder (make it first: mkdir -p \(nowhere))\n")

        // Back into the folder it was added from, not the mounted library.
        let removed = try vaultCommand(["remove", "Secret Series/Moon Tales 01.cb7"])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertEqual(removed.stdout, "restored \(incoming.path)/Moon Tales 01.cb7\n")
        XCTAssertEqual(try readFile(incoming.appendingPathComponent("Moon Tales 01.cb7").path), try readFile(Corpus.fixture("Moon Tales/Moon Tales 01.cb7")))
        // That folder gone: into the running mount's library, saying why.
        try FileManager.default.removeItem(at: incoming)
        let fallback = try vaultCommand(["remove", "Secret Series/Captain Science 001.cbr"])
        XCTAssertEqual(fallback.status, 0, fallback.stderr)
        XCTAssertEqual(fallback.stderr, "inkyfs: Secret Series/Captain Science 001.cbr: the folder it was added from, \(incoming.path), is gone; "
                       + "restoring it into \(library.path) (--to DIR puts it elsewhere)\n")
        XCTAssertEqual(try readFile(library.appendingPathComponent("Captain Science 001.cbr").path),
                       try readFile(Corpus.fixture("Real/Captain Science 001.cbr")), "restored into the mounted library")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Captain Science 001")).count, 5, "and shown there")
    }

    func testAVaultCommandWithNoMountRunningSaysSo() throws {
        let result = try control(["lock"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("no inkyfs mount is running"), result.stderr)
    }
}

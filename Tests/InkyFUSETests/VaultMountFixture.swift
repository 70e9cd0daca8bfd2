import Foundation
import InkyTestSupport
import XCTest

/// A copy of Fixtures/Library with a vault of one comic beside it, mounted; `unlock()` shows
/// `Vault/`. Everything lives in one temporary folder, the control socket in a private runtime
/// folder, so nothing of the machine is touched.
final class VaultMountFixture {
    let folder: URL
    let library: URL
    let vault: URL
    let state: URL
    var environment: [String: String] { ["XDG_RUNTIME_DIR": folder.appendingPathComponent("run").path] }
    private(set) var mount: MountedLibrary!

    init(mountArguments: [String] = [], mountEnvironment: [String: String] = [:], covers: Bool = false, views: Bool = false) throws {
        folder = ArchiveMaker.temporaryDirectory("vault-fixture", removedAtExit: true)
        library = folder.appendingPathComponent("library")
        vault = folder.appendingPathComponent("vault")
        state = folder.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("run"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try ArchiveMaker.run("/bin/cp", ["-a", Corpus.fixtures.path, library.path])
        try "sesame\n".write(to: passwordFile, atomically: true, encoding: .utf8)
        let initialised = try vaultCommand(["init"])
        XCTAssertEqual(initialised.status, 0, initialised.stderr)
        let added = try vaultCommand(["add", Corpus.fixture("Moon Tales/Moon Tales 01.cb7"), "--keep", "--into", "Secret Series"])
        XCTAssertEqual(added.status, 0, added.stderr)
        mount = try MountedLibrary(library: library, arguments: ["--vault", vault.path, "--state", state.path] + mountArguments,
                                   environment: environment.merging(mountEnvironment) { $1 }, covers: covers, views: views)
    }

    deinit {
        mount?.unmount()
        try? FileManager.default.removeItem(at: folder)
    }

    var passwordFile: URL { folder.appendingPathComponent("pw") }

    func vaultCommand(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments + ["--vault", vault.path, "--password-file", passwordFile.path], environment: environment)
    }

    func unlock() throws {
        let unlocked = try CommandRunner.inkyfs(["vault", "unlock", mount.mountpoint.path, "--password-file", passwordFile.path],
                                                environment: environment)
        XCTAssertEqual(unlocked.status, 0, unlocked.stderr)
    }

    /// `inkyfs vault COMMAND` through the mount's control socket (lock, debug...).
    func vaultControl(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments, environment: environment)
    }

    func path(_ relative: String) -> String { mount.path(relative) }
}

import Foundation
import InkyArchive
import InkyTestSupport
import InkyVault
import XCTest

/// A compromised worker keeps every key it is sent. The debug-build hook makes each worker say
/// which keys it ever received; through a real mount with one worker, reading two vault comics
/// and a library comic in turn, no worker ever holds a key but that of the comic it serves.
final class MountVaultKeyIsolationTests: XCTestCase {
    func testAWorkerHoldsAtMostTheKeyOfTheComicItServes() throws {
        let folder = ArchiveMaker.temporaryDirectory("vault-keys")
        defer { try? FileManager.default.removeItem(at: folder) }
        let library = folder.appendingPathComponent("library"), vault = folder.appendingPathComponent("vault").path
        let password = folder.appendingPathComponent("pw").path
        let environment = ["XDG_RUNTIME_DIR": folder.appendingPathComponent("run").path, "INKYFS_TEST_COMPROMISED_WORKER": "1"]
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("run"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.fixture("Moon Tales/Moon Tales 01.cb7"), toPath: library.appendingPathComponent("Public.cb7").path)
        try "sesame\n".write(toFile: password, atomically: true, encoding: .utf8)
        func inkyfs(_ arguments: [String]) throws -> CommandRunner.Result { try CommandRunner.inkyfs(arguments, environment: environment) }
        XCTAssertEqual(try inkyfs(["vault", "init", "--vault", vault, "--password-file", password]).status, 0)
        let comics = ["Moon Tales/Moon Tales 01.cb7": "Moon Tales 01", "Real/Captain Science 001.cbr": "Captain Science 001"]
        for comic in comics.keys.sorted() {
            XCTAssertEqual(try inkyfs(["vault", "add", Corpus.fixture(comic), "--keep", "--vault", vault, "--password-file", password]).status, 0)
        }

        let mount = try MountedLibrary(library: library, arguments: ["--vault", vault, "--workers", "1", "--no-list-ahead",
                                                                     "--state", folder.appendingPathComponent("state").path],
                                       environment: environment)
        XCTAssertEqual(try inkyfs(["vault", "unlock", mount.mountpoint.path, "--password-file", password]).status, 0)
        // Alternate: half of one comic, the other, the rest of the first, a library comic, back to the vault.
        var pages: [String: [String]] = [:]
        for directory in comics.values { pages[directory] = try FileManager.default.contentsOfDirectory(atPath: mount.path("Vault/\(directory)")).sorted() }
        let moon = pages["Moon Tales 01"]!, captain = pages["Captain Science 001"]!
        for page in moon.prefix(moon.count / 2) { _ = try readFile(mount.path("Vault/Moon Tales 01/\(page)")) }
        for page in captain { _ = try readFile(mount.path("Vault/Captain Science 001/\(page)")) }
        for page in moon.dropFirst(moon.count / 2) { _ = try readFile(mount.path("Vault/Moon Tales 01/\(page)")) }
        let during = try inkyfs(["vault", "debug", mount.mountpoint.path]).stdout
        XCTAssertTrue(during.contains("keysInWorkers=1 "), "the one worker holds one key, and the count shows it: \(during)")
        XCTAssertEqual(try readFile(mount.path("Public/\(moon[0])")), try readFile(mount.path("Vault/Moon Tales 01/\(moon[0])")))
        let afterLibrary = try inkyfs(["vault", "debug", mount.mountpoint.path]).stdout
        XCTAssertTrue(afterLibrary.contains("keysInWorkers=0 "), "the keyed worker was stopped, not given a library comic: \(afterLibrary)")
        XCTAssertEqual(try inkyfs(["vault", "lock", mount.mountpoint.path]).status, 0)
        let after = try inkyfs(["vault", "debug", mount.mountpoint.path]).stdout
        XCTAssertTrue(after.contains("liveKeyBuffers=0 keysInWorkers=0 "), after)
        mount.unmount()

        // The keys themselves, from the vault: which fingerprint belongs to which object.
        let unlocked = try Vault.unlock(at: vault, password: SecureBytes(copying: Array("sesame".utf8)))
        defer { unlocked.lock() }
        var expected: [String: String] = [:]
        for entry in try unlocked.entries {
            let key = try unlocked.keys().objectKey(fileID: entry.fileID)
            let print = try HKDFSHA256.deriveKey(inputKey: key, info: Array("inkyfs test: key fingerprint".utf8), length: 8)
            expected[entry.name] = print.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        }
        // The hook's lines come through the daemon's log, after its time and level.
        let lines = mount.logText.split(separator: "\n").compactMap { line in line.range(of: "inkyfs-test-worker ").map { line[$0.lowerBound...] } }
        var served = Set<String>()
        for line in lines {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 8, fields[2] == "serving", fields[4] == "holding", fields[6] == "received" else {
                XCTFail("unexpected line: \(line)")
                continue
            }
            let object = (fields[3] as NSString).lastPathComponent
            served.insert(object)
            XCTAssertEqual(fields[5], "1", "one key held at a time: \(line)")
            XCTAssertEqual(fields[7], expected[object], "a worker holds the key of the comic it serves, and no other: \(line)")
        }
        XCTAssertEqual(served, Set(expected.keys), "both vault comics went through workers: \(lines.count) keys sent")
    }
}

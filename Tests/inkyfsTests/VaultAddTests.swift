import Foundation
import InkyTestSupport
import XCTest

/// What `vault add` does with what it is given, through the real command: a symlink, a file that
/// is no comic, an original that cannot be deleted, an original swapped after it was encrypted.
final class VaultAddTests: XCTestCase {
    private var folder: URL!
    private var vault: String { folder.appendingPathComponent("vault").path }
    private let files = FileManager.default

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("vault-add")
        try "pass\n".write(to: folder.appendingPathComponent("password"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
    }

    override func tearDown() { try? files.removeItem(at: folder) }

    private var environment: [String: String] {
        ["XDG_STATE_HOME": folder.appendingPathComponent("state").path, "XDG_CACHE_HOME": folder.appendingPathComponent("cache").path]
    }

    private var vaultOptions: [String] { ["--vault", vault, "--password-file", folder.appendingPathComponent("password").path] }

    private func vaultCommand(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments + vaultOptions, environment: environment)
    }

    private func comic(_ name: String, in directory: String? = nil) throws -> String {
        let path = (directory ?? folder.path) + "/" + name
        try files.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), toPath: path)
        return path
    }

    private func listed() throws -> String { try vaultCommand(["list"]).stdout }

    func testASymlinkIsRefusedWithTheFileItNamesAndNothingIsDeleted() throws {
        let real = try comic("Real.cbz")
        let link = folder.appendingPathComponent("link.cbz").path
        try files.createSymbolicLink(atPath: link, withDestinationPath: real)
        let refused = try vaultCommand(["add", link])
        XCTAssertEqual(refused.status, 2, "refused, nothing done: \(refused.stderr)")
        XCTAssertEqual(refused.stderr, "inkyfs: \(link): is a symbolic link; add the file it names: \(real)\n")
        XCTAssertEqual(refused.stdout, "")
        XCTAssertTrue(files.fileExists(atPath: real))
        XCTAssertNotNil(try? files.destinationOfSymbolicLink(atPath: link))
        XCTAssertTrue(try listed().hasSuffix("0 comics\n"))
    }

    func testAFileThatIsNoComicIsRefused() throws {
        let page = folder.appendingPathComponent("001.jpg")
        try Data(PageImages.make(.jpeg, width: 40, height: 60)).write(to: page)
        let refused = try vaultCommand(["add", page.path])
        XCTAssertEqual(refused.status, 2, "refused, nothing done: \(refused.stderr)")
        XCTAssertEqual(refused.stderr, "inkyfs: \(page.path): not a comic (a ZIP, RAR, 7z or TAR archive, or a PDF); only comics are added\n")
        XCTAssertTrue(files.fileExists(atPath: page.path))
        XCTAssertTrue(try listed().hasSuffix("0 comics\n"))
    }

    func testANameWithControlCharactersIsRefusedBeforeAnythingIsWritten() throws {
        let hostile = try comic("Issue\u{1B}[2J\u{7}\nfake line.cbz")
        let refused = try vaultCommand(["add", hostile])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("invalid vault path 'Issue\\u{1B}[2J\\u{7}\\u{A}fake line.cbz': contains a control character"),
                      refused.stderr)
        XCTAssertFalse(refused.stderr.contains("\u{1B}"), "the escape is never printed raw")
        XCTAssertTrue(files.fileExists(atPath: hostile))
        let into = try vaultCommand(["add", try comic("Plain.cbz"), "--into", "Bell\u{7}Folder"])
        XCTAssertEqual(into.status, 1, into.stderr)
        XCTAssertTrue(into.stderr.contains("'Bell\\u{7}Folder/Plain.cbz': contains a control character"), into.stderr)
        XCTAssertTrue(try listed().hasSuffix("0 comics\n"))
        XCTAssertEqual(try files.contentsOfDirectory(atPath: vault + "/objects"), [], "refused before any object is written")
    }

    func testADeleteThatFailsIsAnErrorAndTheOriginalIsNotCalledDeleted() throws {
        let disk = try Tmpfs(size: 8 << 20)
        let original = try comic("Issue.cbz", in: disk.path)
        try ArchiveMaker.run("/bin/mount", ["-o", "remount,ro", disk.path])
        let added = try vaultCommand(["add", original])
        XCTAssertEqual(added.status, 1, added.stderr)
        XCTAssertFalse(added.stdout.contains("original deleted"), added.stdout)
        XCTAssertTrue(added.stderr.contains("inkyfs: \(original): added to the vault, but the original was NOT deleted: Read-only file system"),
                      added.stderr)
        XCTAssertTrue(files.fileExists(atPath: original))
        XCTAssertTrue(try listed().contains("Issue.cbz"), "the comic is in the vault all the same")
    }

    /// The command stops itself after the manifest save (`INKYFS_TEST_STOP_AT`); the test swaps the
    /// original for another file of the same name, then lets it go on: the swapped-in file stays.
    func testAnOriginalSwappedAfterEncryptionIsNotDeleted() throws {
        let original = try comic("Issue.cbz")
        let process = Process()
        process.executableURL = CommandRunner.binary
        process.arguments = ["vault", "add", original] + vaultOptions
        process.environment = ProcessInfo.processInfo.environment.merging(environment.merging(["INKYFS_TEST_STOP_AT": "add.manifest-saved"]) { $1 }) { $1 }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        XCTAssertTrue(waitUntil(30) { Self.isStopped(process.processIdentifier) }, "never reached the stop")
        let swapped = Data("a different file, put there after the comic was encrypted".utf8)
        try files.removeItem(atPath: original)
        try swapped.write(to: URL(fileURLWithPath: original))
        kill(process.processIdentifier, SIGCONT)
        let status = process.waitForExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(status, 1, stderr)
        XCTAssertTrue(stderr.contains("the original was NOT deleted: it is no longer the file that was encrypted (replaced or changed since), so it was kept"),
                      stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: original)), swapped, "the swapped-in file is never deleted")
    }

    /// `vault remove` into a folder others may write: while the plaintext is being written and
    /// checked it has no name there and is 0600; it gets its name whole, and its mode last.
    func testRemovePublishesAWholeFileUnderItsNameAndItsModeLast() throws {
        XCTAssertEqual(try vaultCommand(["add", try comic("Issue.cbz")]).status, 0)
        let destination = folder.appendingPathComponent("library")
        try files.createDirectory(at: destination, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        let process = Process()
        process.executableURL = CommandRunner.binary
        process.arguments = ["vault", "remove", "Issue.cbz", "--to", destination.path] + vaultOptions
        process.environment = ProcessInfo.processInfo.environment.merging(environment.merging(["INKYFS_TEST_STOP_AT": "remove.verified"]) { $1 }) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        XCTAssertTrue(waitUntil(30) { Self.isStopped(process.processIdentifier) }, "never reached the stop")
        XCTAssertEqual(try files.contentsOfDirectory(atPath: destination.path), [], "no name while it is written")
        // The command holding the vault's key is not dumpable: its descriptors are root's to read.
        let descriptors = "/proc/\(process.processIdentifier)/fd"
        let seesDescriptors = access(descriptors, R_OK | X_OK) == 0
        if seesDescriptors {
            let unnamed = try files.contentsOfDirectory(atPath: descriptors).compactMap { fd -> stat? in
                let target = (try? files.destinationOfSymbolicLink(atPath: "\(descriptors)/\(fd)")) ?? ""
                guard target.hasPrefix(destination.path + "/#") else { return nil }
                var info = stat()
                return stat("\(descriptors)/\(fd)", &info) == 0 ? info : nil
            }
            XCTAssertEqual(unnamed.count, 1, "the plaintext is an O_TMPFILE in the destination")
            XCTAssertEqual(unnamed.first.map { $0.st_mode & 0o777 }, 0o600)
        }
        kill(process.processIdentifier, SIGCONT)
        XCTAssertEqual(process.waitForExit(), 0)
        let restored = destination.appendingPathComponent("Issue.cbz").path
        XCTAssertEqual(try files.contentsOfDirectory(atPath: destination.path), ["Issue.cbz"])
        XCTAssertEqual(try XCTUnwrap(files.attributesOfItem(atPath: restored)[.posixPermissions] as? Int), 0o666 & ~0o022,
                       "the umask's mode, set last")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: restored)),
                       try Data(contentsOf: URL(fileURLWithPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"))))
        // Everything else was checked; what was not is said, not passed.
        guard seesDescriptors else {
            throw XCTSkip("needs root to read the non-dumpable command's \(descriptors): the unnamed 0600 O_TMPFILE was not checked")
        }
    }

    private static func isStopped(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)] == "T"
    }
}

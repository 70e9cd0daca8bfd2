import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs account add/list/remove` through the real binary: the password from a file (the
/// terminal path is PasswordInput's, tested with the vault's), kept only as a slow hash; clear
/// refusals with exit status 2, a bad name with 64.
final class AccountCommandTests: XCTestCase {
    private var folder: URL!

    override func setUp() { folder = ArchiveMaker.temporaryDirectory("accounts") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func inkyfs(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(arguments + ["--state", folder.appendingPathComponent("state").path])
    }

    private func passwordFile(_ text: String) -> String {
        let path = folder.appendingPathComponent("password-\(text.count)").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        return path
    }

    func testAddListAndRemoveAnAccount() throws {
        XCTAssertEqual(try inkyfs(["account", "list"]).stdout,
                       "no accounts: `inkyfs serve` on loopback asks for no login (add one: inkyfs account add NAME)\n")
        let added = try inkyfs(["account", "add", "kobo", "--password-file", passwordFile("correct horse battery\n")])
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual(added.stdout, "added account kobo\n")
        XCTAssertEqual(added.stderr, "")

        let again = try inkyfs(["account", "add", "kobo", "--password-file", passwordFile("another one\n")])
        XCTAssertEqual(again.status, 2)
        XCTAssertEqual(again.stderr, "inkyfs: an account named kobo exists already; to change its password: "
                       + "inkyfs account remove kobo, then add it again\n")

        let listed = try inkyfs(["account", "list", "--json"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows.first?["name"] as? String, "kobo")
        XCTAssertEqual(rows.first?["kdf"] as? String, "pbkdf2-sha256")
        XCTAssertEqual(rows.first?["iterations"] as? Int, 600_000)
        XCTAssertEqual(Set(rows.first?.keys.map { $0 } ?? []), ["name", "created", "kdf", "iterations"])

        // Neither the password nor its MD5 (KOReader's key) is anywhere in the database's files.
        let stateFolder = folder.appendingPathComponent("state")
        for file in try FileManager.default.contentsOfDirectory(atPath: stateFolder.path) {
            let bytes = try Data(contentsOf: stateFolder.appendingPathComponent(file))
            for secret in ["correct horse battery", "88e4ddd2402d92d50e1879d6ecd9ffd4"] {
                XCTAssertNil(bytes.range(of: Data(secret.utf8)), "\(secret) in \(file)")
            }
        }

        let removed = try inkyfs(["account", "remove", "kobo"])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertEqual(removed.stdout, "removed account kobo\n")
        let unknown = try inkyfs(["account", "remove", "kobo"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertEqual(unknown.stderr, "inkyfs: no account named kobo (inkyfs account list shows them)\n")
        XCTAssertEqual(try inkyfs(["account", "list", "--json"]).stdout, "[\n\n]\n")
    }

    func testRefusalsSayWhy() throws {
        let empty = try inkyfs(["account", "add", "kobo", "--password-file", passwordFile("")])
        XCTAssertEqual(empty.status, 2)
        XCTAssertEqual(empty.stderr, "inkyfs: no password given; no account was added\n")
        let missing = try inkyfs(["account", "add", "kobo", "--password-file", folder.appendingPathComponent("nope").path])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.hasPrefix("inkyfs: cannot open"), missing.stderr)
        let short = try inkyfs(["account", "add", "kobo", "--password-file", passwordFile("abc\n")])
        XCTAssertEqual(short.status, 0, "a short password is the owner's choice")
        XCTAssertTrue(short.stderr.contains("warning: a password of 3 characters is quick to guess for anyone who can reach the server"), short.stderr)
        for name in ["a:b", "two words", ""] {
            let bad = try inkyfs(["account", "add", name, "--password-file", passwordFile("correct horse battery\n")])
            XCTAssertEqual(bad.status, 64, name)
            XCTAssertTrue(bad.stderr.contains("an account name cannot"), bad.stderr)
        }
        let help = try inkyfs(["account", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("inkyfs account add kobo --password-file"), help.stdout)
    }
}

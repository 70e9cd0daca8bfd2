import Foundation
import InkyTestSupport
import XCTest

/// The `--json` shapes docs/json-output.md documents, for the listing commands not covered
/// with their other behaviour elsewhere (scan, pages, vault list, progress, doctor are).
final class ListingJSONTests: XCTestCase {
    private var folder: URL!

    override func setUp() { folder = ArchiveMaker.temporaryDirectory("json") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func json(_ arguments: [String]) throws -> Any {
        let result = try CommandRunner.inkyfs(arguments, environment: ["XDG_RUNTIME_DIR": folder.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    func testBookmarkListJSONHasOneEntryPerComicWithPagesFromOne() throws {
        let state = ["--state", folder.appendingPathComponent("state").path]
        let one = Corpus.fixture("Moon Tales/Moon Tales 01.cb7"), two = Corpus.fixture("Real/Captain Science 001.cbr")
        for (comic, page) in [(one, "3"), (one, "7"), (two, "1")] {
            XCTAssertEqual(try CommandRunner.inkyfs(["bookmark", "add", comic, page] + state).status, 0)
        }
        let rows = try XCTUnwrap(try json(["bookmark", "list", "--json"] + state) as? [[String: Any]])
        XCTAssertEqual(rows.count, 2)
        let byPath = Dictionary(uniqueKeysWithValues: rows.map { ($0["path"] as? String ?? "", $0["bookmarks"] as? [Int] ?? []) })
        XCTAssertEqual(byPath, [one: [3, 7], two: [1]])
        let single = try XCTUnwrap(try json(["bookmark", "list", two, "--json"] + state) as? [[String: Any]])
        XCTAssertEqual(single.map { $0["path"] as? String }, [two])
        XCTAssertEqual(single.map { $0["bookmarks"] as? [Int] }, [[1]])
        let none = try json(["bookmark", "list", "--json", "--state", folder.appendingPathComponent("empty").path]) as? [Any]
        XCTAssertEqual(none?.count, 0, "nothing bookmarked: an empty array")
        XCTAssertNotEqual(try CommandRunner.inkyfs(["bookmark", "add", one, "2", "--json"] + state).status, 0, "--json is for list")
    }

    struct VaultStatus: Decodable, Equatable {
        struct Mount: Decodable, Equatable {
            var mountpoint: String
            var library: String?
            var unlocked: Bool
        }

        var vault: String
        var exists: Bool
        var objects: Int
        var orphans: Int
        var mounts: [Mount]
    }

    func testVaultStatusJSONWithAndWithoutAVault() throws {
        let vault = folder.appendingPathComponent("vault").path
        let status = {
            let result = try CommandRunner.inkyfs(["vault", "status", "--json", "--vault", vault], environment: ["XDG_RUNTIME_DIR": self.folder.path])
            XCTAssertEqual(result.status, 0, result.stderr)
            return try JSONDecoder().decode(VaultStatus.self, from: Data(result.stdout.utf8))
        }
        XCTAssertEqual(try status(), VaultStatus(vault: vault, exists: false, objects: 0, orphans: 0, mounts: []))
        try "pw\n".write(to: folder.appendingPathComponent("pw"), atomically: true, encoding: .utf8)
        let password = ["--vault", vault, "--password-file", folder.appendingPathComponent("pw").path]
        XCTAssertEqual(try CommandRunner.inkyfs(["vault", "init"] + password).status, 0)
        XCTAssertEqual(try CommandRunner.inkyfs(["vault", "add", "--keep", Corpus.fixture("Moon Tales/Moon Tales 01.cb7")] + password).status, 0)
        XCTAssertEqual(try status(), VaultStatus(vault: vault, exists: true, objects: 1, orphans: 0, mounts: []))
    }
}

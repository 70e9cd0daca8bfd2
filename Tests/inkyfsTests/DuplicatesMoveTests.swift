import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs duplicates --move-to DIR`: a dry run moves nothing; `--yes` moves every extra copy
/// (never the comic a group keeps) to its path under DIR, byte for byte, and the next run finds
/// none of them; a file already at the target is never replaced.
final class DuplicatesMoveTests: XCTestCase {
    private var folder: URL!
    private var library: URL { folder.appendingPathComponent("library") }

    override func setUp() { folder = ArchiveMaker.temporaryDirectory("duplicates-move") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func duplicates(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["duplicates", "--json", "--state", folder.appendingPathComponent("state").path] + arguments + [library.path])
    }

    private func moves(_ result: CommandRunner.Result) throws -> [String] {
        let value = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stdout)
        return try XCTUnwrap(value["moves"] as? [[String: Any]]).map { move in
            "\(move["from"] as? String ?? "?") -> \(move["to"] as? String ?? "?") \(move["moved"] as? Bool == true ? "moved" : "stayed")"
                + ((move["error"] as? String).map { ": " + $0 } ?? "")
        }
    }

    private func target(_ comic: String, under destination: URL) -> String {
        destination.appendingPathComponent(String(comic.dropFirst(library.path.count + 1))).path
    }

    func testDryRunMovesNothingThenYesMovesTheExtrasAndKeepsOne() throws {
        let planted = try DuplicateLibrary.plant(in: library)
        let bytes = try Dictionary(uniqueKeysWithValues: planted.extras.map { ($0, try Data(contentsOf: URL(fileURLWithPath: $0))) })
        let away = folder.appendingPathComponent("away")

        let dry = try duplicates(["--move-to", away.path])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertEqual(try DuplicateLibrary.groups(in: dry.stdout), planted.expected)
        XCTAssertEqual(try moves(dry), planted.extras.map { "\($0) -> \(target($0, under: away)) stayed" })
        for extra in planted.extras { XCTAssertTrue(FileManager.default.fileExists(atPath: extra), extra) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: away.path), "a dry run made \(away.path)")

        let done = try duplicates(["--move-to", away.path, "--yes"])
        XCTAssertEqual(done.status, 0, done.stderr)
        XCTAssertEqual(try moves(done), planted.extras.map { "\($0) -> \(target($0, under: away)) moved" })
        for extra in planted.extras {
            XCTAssertFalse(FileManager.default.fileExists(atPath: extra), extra)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target(extra, under: away))), bytes[extra], extra)
        }
        // Every group keeps its first comic.
        for group in planted.expected {
            let kept = String(group.split(separator: ": ", maxSplits: 1)[1].split(separator: " | ")[0])
            XCTAssertTrue(FileManager.default.fileExists(atPath: kept), kept)
        }

        // "possible" groups stay until asked for; then nothing is left to find.
        let after = try duplicates([])
        XCTAssertEqual(try DuplicateLibrary.groups(in: after.stdout), planted.expected.filter { $0.hasPrefix("possible: ") })
        let possible = try duplicates(["--move-to", away.path, "--move-possible", "--yes"])
        XCTAssertEqual(try moves(possible), ["\(planted.possibleExtra) -> \(target(planted.possibleExtra, under: away)) moved"])
        XCTAssertEqual(try DuplicateLibrary.groups(in: try duplicates([]).stdout), [])
    }

    /// Onto another filesystem (a tmpfs) a comic is copied and checked, not renamed; a file
    /// already at a target stays as it was, and so does the comic that would have replaced it.
    func testAcrossFilesystemsCopiesVerifiesAndNeverReplaces() throws {
        let planted = try DuplicateLibrary.plant(in: library)
        let disk = try Tmpfs(size: 16 << 20)
        let away = disk.url.appendingPathComponent("away")
        let blocked = try XCTUnwrap(planted.extras.last)
        let blocker = URL(fileURLWithPath: target(blocked, under: away))
        try FileManager.default.createDirectory(at: blocker.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("someone else's file".utf8).write(to: blocker)
        let dates = try Dictionary(uniqueKeysWithValues: planted.extras.map {
            ($0, try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: $0)[.modificationDate] as? Date))
        })
        let bytes = try Dictionary(uniqueKeysWithValues: planted.extras.map { ($0, try Data(contentsOf: URL(fileURLWithPath: $0))) })

        let result = try duplicates(["--move-to", away.path, "--yes"])
        XCTAssertEqual(result.status, 1, "a move that failed must fail the command")
        XCTAssertEqual(try moves(result), planted.extras.dropLast().map { "\($0) -> \(target($0, under: away)) moved" }
                       + ["\(blocked) -> \(blocker.path) stayed: \(blocker.path) already exists: nothing replaced"])
        XCTAssertEqual(try String(contentsOf: blocker, encoding: .utf8), "someone else's file")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: blocked)), bytes[blocked])
        for extra in planted.extras.dropLast() {
            let moved = target(extra, under: away)
            XCTAssertFalse(FileManager.default.fileExists(atPath: extra), extra)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: moved)), bytes[extra], moved)
            XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: moved)[.modificationDate] as? Date, dates[extra], moved)
        }
    }

    func testRefusesAFolderInsideTheLibrary() throws {
        let planted = try DuplicateLibrary.plant(in: library)
        let result = try duplicates(["--move-to", library.appendingPathComponent("Duplicates").path, "--yes"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("inside the library"), result.stderr)
        for extra in planted.extras { XCTAssertTrue(FileManager.default.fileExists(atPath: extra), extra) }
    }
}

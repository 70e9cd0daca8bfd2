import Foundation
import InkyTestSupport
import XCTest

/// Long commands draw a "[k/n] name" line on a terminal and nothing when their output is piped.
/// The terminal is a real pty (util-linux `script`), the pipe the test's own.
final class ProgressDisplayTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("progress")
        try "sesame\n".write(to: folder.appendingPathComponent("pw"), atomically: true, encoding: .utf8)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    /// The progress line's drawing: carriage return, erase line, "[k/n]".
    private let drawing = "\r\u{1B}[K["

    /// Runs inkyfs on a pty; returns what the terminal showed (stdout and stderr together).
    private func onTerminal(_ arguments: [String]) throws -> String {
        let quoted = ([CommandRunner.binary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let result = try CommandRunner.capture("/usr/bin/script", ["-qec", quoted.joined(separator: " "), "/dev/null"])
        XCTAssertEqual(result.status, 0, result.stdout)
        return result.stdout
    }

    private func piped(_ arguments: [String]) throws -> CommandRunner.Result {
        let result = try CommandRunner.inkyfs(arguments)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(result.stderr.contains("\r") || result.stderr.contains("\u{1B}"), "no progress drawing into a pipe: \(result.stderr.debugDescription)")
        XCTAssertFalse(result.stdout.contains("\r") || result.stdout.contains("\u{1B}"), result.stdout.debugDescription)
        return result
    }

    func testScanAndIndexShowProgressOnlyOnATerminal() throws {
        _ = try piped(["scan", Corpus.fixtures.path])
        let scanned = try onTerminal(["scan", Corpus.fixtures.path])
        XCTAssertTrue(scanned.contains(drawing + "2/11] "), scanned.debugDescription)
        let state = folder.appendingPathComponent("state").path
        _ = try piped(["index", Corpus.fixtures.path, "--state", state])
        let indexed = try onTerminal(["index", Corpus.fixtures.path, "--state", folder.appendingPathComponent("state2").path])
        XCTAssertTrue(indexed.contains(drawing) && indexed.contains("] Moon Tales 01.cb7  (") && indexed.contains(" comics/s, ETA "),
                      indexed.debugDescription)
    }

    func testVaultAddAndRemoveShowProgressOnlyOnATerminal() throws {
        let vault = ["--vault", folder.appendingPathComponent("vault").path, "--password-file", folder.appendingPathComponent("pw").path]
        XCTAssertEqual(try CommandRunner.inkyfs(["vault", "init"] + vault).status, 0)
        let comics = ["Moon Tales/Moon Tales 01.cb7", "Real/Captain Science 001.cbr"].map(Corpus.fixture)
        _ = try piped(["vault", "add", "--keep", comics[0]] + vault)
        let added = try onTerminal(["vault", "add", "--keep", comics[1]] + vault)
        XCTAssertTrue(added.contains(drawing + "1/1] encrypting Captain Science 001.cbr ("), added.debugDescription)

        let out = folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        _ = try piped(["vault", "remove", "Moon Tales 01.cb7", "--to", out.path] + vault)
        let removed = try onTerminal(["vault", "remove", "Captain Science 001.cbr", "--to", out.path] + vault)
        XCTAssertTrue(removed.contains(drawing + "1/1] decrypting Captain Science 001.cbr ("), removed.debugDescription)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted(), ["Captain Science 001.cbr", "Moon Tales 01.cb7"])
    }
}

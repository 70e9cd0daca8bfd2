import Foundation
import InkyCore
import InkyTestSupport
import XCTest

final class ScanCommandTests: XCTestCase {
    func testScanOfTheRealComicsMatchesTheManifest() throws {
        let real = Corpus.root.appendingPathComponent("real-comics").path
        try Corpus.skipUnlessPresent("real-comics")
        let result = try CommandRunner.inkyfs(["scan", "--json", real])
        XCTAssertEqual(result.status, 0, result.stderr)
        let summaries = try JSONDecoder().decode([ComicSummary].self, from: Data(result.stdout.utf8))
        let expected = Corpus.manifest.filter { $0.path.hasPrefix("real-comics/") }
        XCTAssertEqual(summaries.count, expected.count, "every real comic file is shown")
        for file in expected {
            let summary = try XCTUnwrap(summaries.first { $0.path == Corpus.path(file.path) }, file.path)
            switch file.expected.status {
            case "ok":
                XCTAssertNil(summary.error, file.path)
                XCTAssertEqual(summary.pages?.count, file.expected.pages.count, file.path)
            case "pdf_only":
                // "Pages only with PDF support": the comicbox PDFs are four text pages each.
                XCTAssertNil(summary.error, file.path)
                XCTAssertEqual(summary.format, .pdf, file.path)
                XCTAssertEqual(summary.pages?.count, 4, file.path)
            default:
                XCTAssertNotNil(summary.error, "\(file.path) (\(file.expected.status)) must say why it shows no pages")
            }
        }
    }

    func testScanTextShowsOneLinePerComicAndASummary() throws {
        let result = try CommandRunner.inkyfs(["scan", Corpus.fixtures.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 12, result.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("ok") && $0.contains("Moon Tales/Moon Tales 01.cb7: 10 pages") }, result.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("ERROR") && $0.contains("Not A Comic.cbr: not a comic archive") }, result.stdout)
        XCTAssertEqual(lines.last, "11 comics: 8 readable (58 pages), 3 with errors")
    }

    /// The whole corpus, including the files libarchive crashes or loops on (scan parses in
    /// workers): no crash, and one clear line for every rejected archive.
    func testScanOfTheWholeCorpusFinishesWithOneClearLinePerComic() throws {
        try XCTSkipIf(Corpus.manifest.isEmpty, "../shared/corpus is missing")
        let library = ArchiveMaker.temporaryDirectory("corpus")
        defer { try? FileManager.default.removeItem(at: library) }
        var candidates = 0
        for file in Corpus.manifest {
            let target = library.appendingPathComponent(file.path)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: target.path, withDestinationPath: Corpus.path(file.path))
            let ext = (file.path as NSString).pathExtension.lowercased()
            if ["cbz", "cbr", "cb7", "cbt", "cba", "zip", "rar", "7z", "tar", "tgz", "tbz", "tbz2", "txz", "tzst", "pdf"].contains(ext) {
                candidates += 1
            }
        }
        let result = try CommandRunner.inkyfs(["scan", library.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, candidates + 1, "one line per comic file plus the summary")
        for line in lines.dropLast() {
            XCTAssertTrue(line.hasPrefix("ok ") || line.hasPrefix("ERROR "), line)
            if line.hasPrefix("ERROR ") {
                let reason = line.components(separatedBy: ": ").dropFirst().joined(separator: ": ")
                XCTAssertGreaterThan(reason.count, 8, "a rejected archive says why: \(line)")
            }
        }
        print(lines.last ?? "")
    }

    func testPagesShowsNamesSourcesAndSkips() throws {
        let result = try CommandRunner.inkyfs(["pages", Corpus.fixture("Space Patrol/Space Patrol 002.cbz")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines[0].hasPrefix("001.jpg") && lines[0].hasSuffix("Chapter 1/01.jpg"), lines[0])
        XCTAssertTrue(lines[9].hasPrefix("010.jpg") && lines[9].hasSuffix("Chapter 10/02.jpg"), lines[9])

        let broken = try CommandRunner.inkyfs(["pages", Corpus.fixture("Broken/Not A Comic.cbr")])
        XCTAssertEqual(broken.status, 1)
        XCTAssertTrue(broken.stdout.contains("not a comic archive"), broken.stdout)

        let json = try CommandRunner.inkyfs(["pages", "--json", Corpus.fixture("Moon Tales/Moon Tales 02.cbt")])
        let summary = try JSONDecoder().decode(ComicSummary.self, from: Data(json.stdout.utf8))
        XCTAssertEqual(summary.format, .tar)
        XCTAssertEqual(summary.pages?.map(\.name), ["001.jpg", "002.jpg", "003.jpg", "004.jpg", "005.jpg", "006.jpg"])
    }

    func testMissingLibraryIsAClearError() throws {
        let result = try CommandRunner.inkyfs(["scan", "/nonexistent/library"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("/nonexistent/library: no such file or folder"), result.stderr)
    }
}

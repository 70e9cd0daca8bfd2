import Foundation
import InkyTestSupport
import XCTest

/// `vault add` and a real mount: a page of the mount is refused with the library file to add, and
/// a comic moved into the vault leaves none of its converted pages, pages kept to resume it, or its
/// cover in the caches.
final class MountVaultAddTests: XCTestCase {
    private var library: URL!
    private var scratch: URL!
    private var cache: URL { scratch.appendingPathComponent("cache") }
    private var vault: String { scratch.appendingPathComponent("vault").path }

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("vault-add-lib")
        scratch = ArchiveMaker.temporaryDirectory("vault-add-scratch")
        try "pass\n".write(to: scratch.appendingPathComponent("password"), atomically: true, encoding: .utf8)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: scratch)
    }

    private func vaultCommand(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments + ["--vault", vault, "--password-file", scratch.appendingPathComponent("password").path],
                                 environment: ["XDG_CACHE_HOME": cache.path, "XDG_STATE_HOME": scratch.appendingPathComponent("state").path])
    }

    private func cached(_ folder: String, _ suffix: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: cache.path + "/inkyfs/" + folder)) ?? []).filter { $0.hasSuffix(suffix) }
    }

    func testAPageOfTheMountIsRefusedAndAnAddedComicLeavesNoPictureInTheCaches() throws {
        let series = library.appendingPathComponent("Series")
        try FileManager.default.createDirectory(at: series, withIntermediateDirectories: true)
        let comic = series.appendingPathComponent("Series 01.cbz")
        try ArchiveMaker.zip(at: comic, members: try (1...3).map { ("p\($0).jpg", try PageImages.make(.jpeg, width: 700, height: 1_000 + 50 * $0)) })
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)

        var mount: MountedLibrary? = try MountedLibrary(library: library, arguments: ["--pages", "jpeg", "--fit", "400x600", "--grayscale"],
                                                        environment: ["XDG_CACHE_HOME": cache.path], covers: true)
        let mounted = try XCTUnwrap(mount)
        XCTAssertTrue(waitUntil(30) { FileManager.default.fileExists(atPath: mounted.path("Series/folder.jpg")) }, mounted.logText)
        XCTAssertFalse(try readFile(mounted.path("Series/folder.jpg")).isEmpty)
        for page in ["001.jpg", "002.jpg", "003.jpg"] { XCTAssertFalse(try readFile(mounted.path("Series/Series 01/\(page)")).isEmpty) }

        let page = mounted.path("Series/Series 01/001.jpg")
        let refused = try vaultCommand(["add", page])
        XCTAssertEqual(refused.status, 2, "refused, nothing done: \(refused.stderr)")
        XCTAssertTrue(refused.stderr.hasPrefix("inkyfs: \(page): is inside an inkyfs mount"), refused.stderr)
        XCTAssertTrue(refused.stderr.hasSuffix("which shows pages, not comics; add the comic itself: \(comic.path)\n"), refused.stderr)
        XCTAssertEqual(mount?.unmount(), 0)
        mount = nil
        XCTAssertEqual(cached("pages", ".page").count, 3, "the converted pages are on disk")
        XCTAssertEqual(cached("covers", ".jpg").count, 1, "and the cover")

        let added = try vaultCommand(["add", comic.path])
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertTrue(added.stdout.contains("added Series 01.cbz"), added.stdout)
        XCTAssertEqual(cached("pages", ".page"), [], "no converted page of it is left")
        XCTAssertEqual(cached("covers", ".jpg"), [], "nor its cover")
    }

    func testASolidComicAddedHalfReadLeavesNoneOfTheDecodedPagesKeptToResumeIt() throws {
        let comic = library.appendingPathComponent("Solid.cb7")
        try GeneratedComic.write((1...40).map { (String(format: "%02d.png", $0), GeneratedComic.page($0)) }, as: .sevenZipSolid, to: comic)
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
        let mount = try MountedLibrary(library: library, environment: ["XDG_CACHE_HOME": cache.path])
        XCTAssertEqual(try readFile(mount.path("Solid/010.png")), GeneratedComic.page(10))
        // Page 10 and the 24 after it.
        XCTAssertTrue(waitUntil(30) { cached("pages", ".page").count == 25 }, "\(cached("pages", ".page"))")
        XCTAssertEqual(mount.unmount(), 0)

        let added = try vaultCommand(["add", comic.path])
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual(cached("pages", ".page"), [], "no page kept to resume it is left")
    }
}

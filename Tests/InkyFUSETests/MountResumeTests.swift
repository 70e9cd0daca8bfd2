import Foundation
import InkyTestSupport
import XCTest

/// Resuming a solid comic after a remount, through real mounts: the last page read and the pages
/// after it are kept on disk (`$XDG_CACHE_HOME/inkyfs/pages`) and served from there while the
/// worker cannot decode anything; a changed archive is never served from them; finishing the comic
/// removes them; a vault comic leaves nothing of its pages in the cache.
final class MountResumeTests: XCTestCase {
    private var library: URL!
    private var scratch: URL!
    private let pageCount = 60
    /// The page read before the remount (0-based), and how many pages after it are kept.
    private let stop = 29
    private let ahead = 24

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("resume-lib")
        scratch = ArchiveMaker.temporaryDirectory("resume-scratch")
        try writeComic(edition: "first")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: scratch)
    }

    private var comic: URL { library.appendingPathComponent("Long.cb7") }
    private var pagesFolder: String { scratch.path + "/cache/inkyfs/pages" }
    private var state: String { scratch.path + "/state" }

    /// Page `index` of an edition: its text says which edition and page it is.
    private func page(_ index: Int, edition: String) -> [UInt8] { Array("\(edition) edition, page \(index + 1)\n".utf8) }

    private func writeComic(edition: String) throws {
        let members = (0..<pageCount).map { (String(format: "%03d.png", $0 + 1), page($0, edition: edition)) }
        let written = scratch.appendingPathComponent("Long-\(edition).cb7")
        try GeneratedComic.write(members, as: .sevenZipSolid, to: written)
        // Renamed into place: the comic is a new file (inode), as a tool replacing it makes it.
        XCTAssertEqual(rename(written.path, comic.path), 0)
    }

    private func mount(_ environment: [String: String] = [:]) throws -> MountedLibrary {
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        return try MountedLibrary(library: library, arguments: ["--state", state],
                                  environment: ["XDG_CACHE_HOME": scratch.path + "/cache"].merging(environment) { $1 })
    }

    private func pageName(_ index: Int) -> String { String(format: "Long/%03d.png", index + 1) }

    /// The cache's page files and their contents.
    private func keptFiles() -> [String: [UInt8]] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: pagesFolder)) ?? []).filter { $0.hasSuffix(".page") }
        return Dictionary(uniqueKeysWithValues: names.compactMap { name in (try? readFile(pagesFolder + "/" + name)).map { (name, $0) } })
    }

    /// Which pages of `edition` the cache holds, by index.
    private func keptPages(edition: String) -> Set<Int> {
        let files = keptFiles().values
        return Set((0..<pageCount).filter { index in files.contains { $0.ends(with: page(index, edition: edition)) } })
    }

    /// Reads page `stop` and waits until it and the `ahead` pages after it are on disk.
    private func readToStop(_ mount: MountedLibrary, edition: String = "first") throws {
        XCTAssertEqual(try readFile(mount.path(pageName(stop))), page(stop, edition: edition))
        let run = Set(stop...stop + ahead)
        XCTAssertTrue(waitUntil(30) { keptPages(edition: edition) == run }, "\(keptPages(edition: edition).sorted())")
    }

    func testARemountServesTheKeptPagesWithoutDecodingAndTheRestInOrder() throws {
        var mounted = try mount()
        try readToStop(mounted)
        // Pages this mount decoded and kept are no resume.
        XCTAssertFalse(mounted.logText.contains("resumed"), mounted.logText)
        XCTAssertEqual(mounted.unmount(), 0)

        // Any page request reaching a worker now kills it: the kept pages must come from disk.
        mounted = try mount(["INKYFS_TEST_WORKER_FAULT": "crash-read:Long"])
        for index in stop...stop + 4 {
            XCTAssertEqual(try readFile(mounted.path(pageName(index))), page(index, edition: "first"), "page \(index + 1)")
        }
        // Said once, where the run stands when the comic's strand gets to it (the reads go on meanwhile).
        XCTAssertTrue(mounted.logSays("resumed \(comic.path) at page "), mounted.logText)
        let log = mounted.wholeLogAfterUnmount()
        XCTAssertFalse(log.contains("read failed"), log)

        // Then with a worker that decodes: from the last page read to the end, byte for byte.
        mounted = try mount()
        for index in stop + 4..<pageCount {
            XCTAssertEqual(try readFile(mounted.path(pageName(index))), page(index, edition: "first"), "page \(index + 1)")
        }
        XCTAssertEqual(mounted.unmount(), 0)
    }

    func testAReplacedArchiveIsNeverServedFromTheKeptPages() throws {
        var mounted = try mount()
        try readToStop(mounted)
        XCTAssertEqual(mounted.unmount(), 0)

        // Replaced between mounts: the new pages, never the kept ones.
        try writeComic(edition: "second")
        mounted = try mount()
        try readToStop(mounted, edition: "second")

        // Replaced while mounted: the same, and the pages kept of the file that went are removed.
        try writeComic(edition: "third")
        XCTAssertTrue(waitUntil(10) { (try? readFile(mounted.path(pageName(stop)))) == page(stop, edition: "third") })
        XCTAssertTrue(waitUntil(30) { keptPages(edition: "second").isEmpty }, "\(keptPages(edition: "second").sorted())")
        XCTAssertTrue(waitUntil(30) { keptPages(edition: "third") == Set(stop...stop + ahead) })
        XCTAssertEqual(mounted.unmount(), 0)
    }

    func testFinishingTheComicDropsItsKeptPages() throws {
        let mounted = try mount()
        try readToStop(mounted)
        XCTAssertEqual(try readFile(mounted.path(pageName(pageCount - 1))), page(pageCount - 1, edition: "first"))
        XCTAssertTrue(waitUntil(30) { keptFiles().isEmpty }, "\(keptFiles().keys.sorted())")
        XCTAssertEqual(mounted.unmount(), 0)
        XCTAssertEqual(keptFiles().count, 0)
    }

    func testAVaultComicLeavesNoPageInTheCache() throws {
        let cache = scratch.appendingPathComponent("vault-cache")
        let fixture = try VaultMountFixture(mountEnvironment: ["XDG_CACHE_HOME": cache.path])
        try fixture.unlock()
        // A solid comic in the vault read as one reads, stopping half way: in progress.
        let vaultComic = fixture.path("Vault/Secret Series/Moon Tales 01")
        let names = try FileManager.default.contentsOfDirectory(atPath: vaultComic).sorted()
        XCTAssertEqual(names.count, 10, "\(names)")
        let read = try names.prefix(4).map { try readFile("\(vaultComic)/\($0)") }
        XCTAssertEqual(fixture.mount.unmount(), 0)
        let folder = cache.path + "/inkyfs"
        XCTAssertEqual(filesHolding(read, under: folder), [])

        // The same comic in the library, read the same way, keeps its last page read (and those
        // after it): the scan looks in the right place.
        let again = try VaultMountFixture(mountEnvironment: ["XDG_CACHE_HOME": cache.path])
        let libraryComic = again.path("Moon Tales/Moon Tales 01")
        XCTAssertEqual(try names.prefix(4).map { try readFile("\(libraryComic)/\($0)") }, read)
        XCTAssertTrue(waitUntil(30) { filesHolding([read[3]], under: folder).count == 1 }, "\(filesHolding(read, under: folder))")
        XCTAssertEqual(again.mount.unmount(), 0)
    }

    /// Files under `folder` (any depth) that hold any of `pages`' bytes.
    private func filesHolding(_ pages: [[UInt8]], under folder: String) -> [String] {
        let files = (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? []
        return files.sorted().filter { name in
            guard let bytes = try? readFile(folder + "/" + name) else { return false }
            return pages.contains { page in bytes.count >= page.count && bytes.firstRange(of: page) != nil }
        }
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix) }
}

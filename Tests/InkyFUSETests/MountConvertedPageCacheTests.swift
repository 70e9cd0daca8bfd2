import Foundation
import InkyTestSupport
import XCTest

/// The disk cache of converted pages through real mounts: a remount serves every page byte for
/// byte from `$XDG_CACHE_HOME/inkyfs/pages` while its worker cannot read the archive, and answers
/// `stat` without converting; prefetched pages land in both caches; a damaged file is converted
/// again, never served; the cap holds; a vault comic leaves nothing on disk.
final class MountConvertedPageCacheTests: XCTestCase {
    private var library: URL!
    private var scratch: URL!
    private var cache: URL!
    private let pageCount = 6

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("pagecache-lib")
        scratch = ArchiveMaker.temporaryDirectory("pagecache-scratch")
        cache = scratch.appendingPathComponent("cache")
    }

    override func tearDown() {
        chmod(library.appendingPathComponent("Device.cbz").path, 0o644)
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: scratch)
    }

    private var pagesFolder: String { cache.path + "/inkyfs/pages" }
    private var names: [String] { (1...pageCount).map { String(format: "%03d.jpg", $0) } }

    /// A deflated CBZ of JPEGs of different sizes (so their converted sizes differ), and the state folder.
    private func makeComic() throws -> URL {
        let members = try (0..<pageCount).map { index in
            (String(format: "p%02d.jpg", index + 1), try PageImages.make(.jpeg, width: 700 + 60 * index, height: 1_050 + 90 * index))
        }
        try ArchiveMaker.zip(at: library.appendingPathComponent("Device.cbz"), members: members, compression: "deflated")
        let state = scratch.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        return state
    }

    private func cachedFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: pagesFolder)) ?? []).filter { $0.hasSuffix(".page") }.sorted()
    }

    /// Reads every page of the comic through the mount, each stat'ed first as a viewer would.
    private func readAll(_ mount: MountedLibrary) throws -> [[UInt8]] {
        try names.map { name in
            let path = mount.path("Device/\(name)")
            let size = try XCTUnwrap(statSize(path), name)
            let bytes = try readFile(path)
            XCTAssertEqual(Int64(bytes.count), size, name)
            return bytes
        }
    }

    /// The pages that differ, by name (a failure names them instead of printing megabytes).
    private func differing(_ seen: [[UInt8]], _ expected: [[UInt8]]) -> [String] {
        zip(names, zip(seen, expected)).filter { $1.0 != $1.1 }.map(\.0) + (seen.count == expected.count ? [] : ["count \(seen.count)"])
    }

    func testARemountServesEveryPageFromTheDiskCacheWithoutTheArchiveAndStatsWithoutConverting() throws {
        let state = try makeComic()
        let arguments = ["--pages", "jpeg", "--fit", "400x600"]
        var mount = try MountedLibrary(library: library, arguments: arguments + ["--state", state.path],
                                       environment: ["XDG_CACHE_HOME": cache.path])
        let pages = try readAll(mount)
        for page in try pages.map(PageImages.inspect) { XCTAssertTrue(page.format == "JPEG" && page.width <= 400 && page.height <= 600, "\(page)") }
        XCTAssertEqual(mount.unmount(), 0)
        XCTAssertEqual(cachedFiles().count, pageCount, "\(cachedFiles())")
        var info = stat()
        XCTAssertEqual(stat(pagesFolder, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        XCTAssertEqual(stat(pagesFolder + "/" + cachedFiles()[0], &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)

        // The archive is unreadable now, and a worker asked anything about it dies (the tests may
        // run as root, whom modes do not stop): the index lists it, the disk cache serves it.
        XCTAssertEqual(chmod(library.appendingPathComponent("Device.cbz").path, 0), 0)
        mount = try MountedLibrary(library: library, arguments: arguments + ["--state", state.path],
                                   environment: ["XDG_CACHE_HOME": cache.path, "INKYFS_TEST_WORKER_FAULT": "crash:Device"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Device")).sorted(), names)
        XCTAssertEqual(differing(try readAll(mount), pages), [])
        let log = mount.wholeLogAfterUnmount()
        XCTAssertFalse(log.contains("read failed"), log)
        XCTAssertEqual(chmod(library.appendingPathComponent("Device.cbz").path, 0o644), 0)

        // A new index: the worker lists the comic but dies at any page read, so each `stat`
        // (sizes unknown to this index) is answered from the disk cache, converting nothing.
        let fresh = scratch.appendingPathComponent("fresh")
        try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
        mount = try MountedLibrary(library: library, arguments: arguments + ["--state", fresh.path],
                                   environment: ["XDG_CACHE_HOME": cache.path, "INKYFS_TEST_WORKER_FAULT": "crash-read:Device"])
        XCTAssertEqual(names.map { statSize(mount.path("Device/\($0)")) }, pages.map { Int64($0.count) })
        XCTAssertEqual(differing(try readAll(mount), pages), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Device/ERROR.txt")))
        XCTAssertEqual(mount.unmount(), 0)

        // Without the cache (size 0) `stat` still converts nothing (pages fitted to a box are listed
        // at their size budget), but a read must convert, and its worker dies.
        mount = try MountedLibrary(library: library, arguments: arguments + ["--state", scratch.appendingPathComponent("none.db").path,
                                                                           "-o", "page_cache_size=0"],
                                   environment: ["XDG_CACHE_HOME": cache.path, "INKYFS_TEST_WORKER_FAULT": "crash-read:Device"])
        XCTAssertEqual(statSize(mount.path("Device/001.jpg")), Int64(pages[0].count))
        XCTAssertThrowsError(try readFile(mount.path("Device/001.jpg")), "a conversion was needed and crashed the worker")
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testPrefetchConvertsAheadIntoBothCaches() throws {
        let state = try makeComic()
        let mount = try MountedLibrary(library: library, arguments: ["--fit", "400x600", "--prefetch", "3", "--state", state.path],
                                       environment: ["XDG_CACHE_HOME": cache.path])
        _ = try readFile(mount.path("Device/001.jpg"))
        // Pages 2-4 are converted ahead and written to disk.
        let deadline = Date().addingTimeInterval(30)
        while cachedFiles().count < 4, Date() < deadline { usleep(50_000) }
        XCTAssertEqual(cachedFiles().count, 4, "\(cachedFiles())")
        // And kept in memory: with their files gone, reading them converts nothing (nothing is
        // written again); only pages 5 and 6, prefetched now, reach the disk.
        for file in cachedFiles() { try FileManager.default.removeItem(atPath: pagesFolder + "/" + file) }
        for name in names[1...3] { XCTAssertEqual(try PageImages.inspect(readFile(mount.path("Device/\(name)"))).format, "JPEG", name) }
        XCTAssertEqual(mount.unmount(), 0)
        XCTAssertEqual(cachedFiles().count, 2, "\(cachedFiles())")
    }

    func testADamagedCacheFileIsConvertedAgainNeverServed() throws {
        let state = try makeComic()
        let arguments = ["--pages", "jpeg", "--fit", "400x600", "--state", state.path]
        var mount = try MountedLibrary(library: library, arguments: arguments, environment: ["XDG_CACHE_HOME": cache.path])
        let pages = try readAll(mount)
        XCTAssertEqual(mount.unmount(), 0)
        let files = cachedFiles().map { pagesFolder + "/" + $0 }
        XCTAssertEqual(files.count, pageCount)
        let sizes = try files.map { try XCTUnwrap(FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) }
        // Cut short; one byte of the page changed (same length); another page's file under this name.
        XCTAssertEqual(truncate(files[0], off_t(sizes[0] - 100)), 0)
        var flipped = try readFile(files[1])
        flipped[flipped.count / 2] ^= 0x55
        try Data(flipped).write(to: URL(fileURLWithPath: files[1]))
        try FileManager.default.removeItem(atPath: files[2])
        try FileManager.default.copyItem(atPath: files[3], toPath: files[2])

        mount = try MountedLibrary(library: library, arguments: arguments, environment: ["XDG_CACHE_HOME": cache.path])
        XCTAssertEqual(differing(try readAll(mount), pages), [])
        XCTAssertEqual(mount.unmount(), 0)
        // Converted again and stored whole again.
        XCTAssertEqual(cachedFiles().map { pagesFolder + "/" + $0 }, files)
        XCTAssertEqual(try files.map { try XCTUnwrap(FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) }, sizes)
    }

    func testTheCacheStaysUnderItsCapKeepingTheNewestPage() throws {
        let state = try makeComic()
        var mount = try MountedLibrary(library: library, arguments: ["--grayscale", "--state", state.path, "--prefetch", "0"],
                                       environment: ["XDG_CACHE_HOME": scratch.appendingPathComponent("big").path])
        let pages = try readAll(mount)
        XCTAssertEqual(mount.unmount(), 0)

        // Room for the largest page alone (and its header): each new one pushes out the one used longest ago.
        let cap = pages.map(\.count).max()! + 200
        mount = try MountedLibrary(library: library, arguments: ["--grayscale", "--prefetch", "0", "-o", "page_cache_size=\(cap)B"],
                                   environment: ["XDG_CACHE_HOME": cache.path])
        XCTAssertEqual(differing(try readAll(mount), pages), [])
        XCTAssertEqual(mount.unmount(), 0)
        let kept = cachedFiles()
        XCTAssertEqual(kept.count, 1, "\(kept)")
        let file = try readFile(pagesFolder + "/" + kept[0])
        XCTAssertLessThanOrEqual(file.count, cap)
        XCTAssertTrue(file.suffix(pages[pageCount - 1].count).elementsEqual(pages[pageCount - 1]), "the newest stays")
    }

    func testAVaultComicLeavesNothingOnDisk() throws {
        let fixture = try VaultMountFixture(mountArguments: ["--pages", "jpeg", "--grayscale", "--fit", "400x600"],
                                            mountEnvironment: ["XDG_CACHE_HOME": cache.path])
        try fixture.unlock()
        // The same comic in the vault and in the library, read whole: only the library's pages
        // reach the disk (and they do: the folder looked at is the right one).
        let vaultComic = fixture.path("Vault/Secret Series/Moon Tales 01")
        let libraryComic = fixture.path("Moon Tales/Moon Tales 01")
        let vaultPages = try FileManager.default.contentsOfDirectory(atPath: vaultComic).sorted()
        XCTAssertEqual(vaultPages.count, 10, "\(vaultPages)")
        for name in vaultPages { XCTAssertEqual(try PageImages.inspect(readFile("\(vaultComic)/\(name)")).format, "JPEG", name) }
        let libraryPages = try FileManager.default.contentsOfDirectory(atPath: libraryComic).sorted()
        XCTAssertEqual(libraryPages, vaultPages)
        for name in libraryPages { XCTAssertTrue(try readFile("\(libraryComic)/\(name)") == readFile("\(vaultComic)/\(name)"), name) }
        XCTAssertEqual(fixture.mount.unmount(), 0)
        XCTAssertEqual(cachedFiles().count, libraryPages.count, "\(cachedFiles())")
    }
}

import Foundation
import InkyArchive
import InkyCore
import InkyTestSupport
import XCTest

/// The sample library and the real comics, mounted for real and read through the kernel.
final class MountReadTests: XCTestCase {
    /// Comic files of a library and the directory name each gets under the mount (fixtures
    /// have no name collisions).
    private func comics(in library: URL) -> [(file: String, directory: String)] {
        let files = FileManager.default.enumerator(atPath: library.path)?.compactMap { $0 as? String } ?? []
        return files.filter { ["cbz", "cbr", "cb7", "cbt"].contains(($0 as NSString).pathExtension) }
            .map { ($0, ($0 as NSString).deletingPathExtension) }.sorted { $0.0 < $1.0 }
    }

    func testListingsEqualPagesAndEveryPageIsTheEntryByteForByte() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        var checked = 0
        for (file, directory) in comics(in: Corpus.fixtures) {
            let summary = try JSONDecoder().decode(ComicSummary.self,
                from: Data(CommandRunner.inkyfs(["pages", "--json", Corpus.fixture(file)]).stdout.utf8))
            let listed = try FileManager.default.contentsOfDirectory(atPath: mount.path(directory)).sorted()
            guard let pages = summary.pages else {
                XCTAssertEqual(listed, ["ERROR.txt"], file)
                continue
            }
            let expectedNames = pages.map(\.name) + (summary.comicInfo != nil ? [".ComicInfo.xml"] : [])
            XCTAssertEqual(listed, expectedNames.sorted(), file)
            // Each page against its entry as Python, 7-Zip or bsdtar extract it: not inkyfs's reader.
            var sources: Set<String> = []
            for name in pages.map(\.name) {
                let path = mount.path("\(directory)/\(name)")
                let source = try sourceAttribute(path)
                XCTAssertTrue(sources.insert(source).inserted, "\(file): two pages from \(source)")
                XCTAssertEqual(try readFile(path), try ReferenceArchive.member(source, of: Corpus.fixture(file)), "\(file) \(name)")
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 50)
        XCTAssertTrue(mount.isDaemonAlive)
        XCTAssertEqual(mount.unmount(), 0, "the daemon exits 0 on unmount")
    }

    func testRealComicsServeTheManifestHashes() throws {
        let real = Corpus.root.appendingPathComponent("real-comics")
        try Corpus.skipUnlessPresent("real-comics")
        let mount = try MountedLibrary(library: real)
        let comics = Corpus.manifest.filter { $0.path.hasPrefix("real-comics/") && $0.expected.status == "ok" }
        XCTAssertEqual(comics.count, 10)
        for comic in comics {
            let relative = String(comic.path.dropFirst("real-comics/".count))
            let directory = try mountDirectory(of: relative, in: mount)
            let names = try FileManager.default.contentsOfDirectory(atPath: mount.path(directory)).filter { !$0.hasPrefix(".") }.sorted()
            XCTAssertEqual(names.count, comic.expected.pages.count, relative)
            for (name, expected) in zip(names, comic.expected.pages) {
                let bytes = try readFile(mount.path("\(directory)/\(name)"))
                XCTAssertEqual(Digest.sha256Hex(bytes), expected.sha256, "\(relative) \(name)")
                XCTAssertEqual(try sourceAttribute(mount.path("\(directory)/\(name)")), expected.entry)
            }
        }
    }

    /// The directory a comic file gets: its name without extension, or the full name when
    /// another sibling wants the same name (the comicbox folder has several).
    private func mountDirectory(of relative: String, in mount: MountedLibrary) throws -> String {
        let stripped = (relative as NSString).deletingPathExtension
        return FileManager.default.fileExists(atPath: mount.path(stripped)) ? stripped : relative
    }

    func testPagesDecodeAsImagesWithARealDecoder() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        for directory in ["Space Patrol/Space Patrol 002", "Moon Tales/Moon Tales 01", "Moon Tales/Moon Tales 02", "Real/Captain Science 001"] {
            let pages = try FileManager.default.contentsOfDirectory(atPath: mount.path(directory)).filter { !$0.hasPrefix(".") }
            XCTAssertFalse(pages.isEmpty)
            let output = try ArchiveMaker.run("/usr/bin/identify", pages.sorted().map { mount.path("\(directory)/\($0)") })
            XCTAssertEqual(output.split(separator: "\n").count, pages.count, output)
            XCTAssertFalse(output.contains("error"), output)
        }
    }

    func testAttributesAreExactBeforeAnyRead() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        let reader = try ComicOpener.open(Corpus.fixture("Moon Tales/Moon Tales 01.cb7"))
        let archive = try FileManager.default.attributesOfItem(atPath: Corpus.fixture("Moon Tales/Moon Tales 01.cb7"))
        for page in reader.listing.pages {
            let path = mount.path("Moon Tales/Moon Tales 01/\(page.name)")
            var info = stat()
            XCTAssertEqual(stat(path, &info), 0)
            XCTAssertEqual(Int64(info.st_size), page.size)
            XCTAssertEqual(info.st_mode & 0o7777, 0o444)
            XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG)
            XCTAssertEqual(Double(info.st_mtim.tv_sec), (archive[.modificationDate] as! Date).timeIntervalSince1970.rounded(.down))
            XCTAssertEqual(try sourceAttribute(path), page.sourcePath)
            XCTAssertEqual(try attribute("user.inkyfs.archive", path), Corpus.fixture("Moon Tales/Moon Tales 01.cb7"))
        }
        var info = stat()
        XCTAssertEqual(stat(mount.path("Moon Tales/Moon Tales 01"), &info), 0)
        XCTAssertEqual(info.st_mode & 0o7777, 0o555)
        XCTAssertEqual(stat(mount.path("Space Patrol/cover.jpg"), &info), 0, "loose files pass through")
        XCTAssertEqual(try readFile(mount.path("Space Patrol/cover.jpg")), try readFile(Corpus.fixture("Space Patrol/cover.jpg")))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Loose Sketches")).sorted(),
                       ["sketch-1.png", "sketch-10.jpg", "sketch-2.jpg", "sketch-3.jpg"], "folders of images stay folders")
        XCTAssertEqual(open(mount.path("Moon Tales/Moon Tales 01/001.jpg"), O_WRONLY), -1, "read-only")
        XCTAssertEqual(errnoName(errno), errnoName(EROFS), "refused as a read-only mount, whoever asks")
        XCTAssertEqual(mkdir(mount.path("new"), 0o755), -1)
        XCTAssertEqual(errnoName(errno), errnoName(EROFS))
    }

    func testOnlyUserAttributesAreSupportedSoLsAsksForSecurityLabelsOnce() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        let comic = mount.path("Moon Tales/Moon Tales 01")
        let pages = try FileManager.default.contentsOfDirectory(atPath: comic).filter { $0.hasSuffix(".jpg") }
        XCTAssertGreaterThan(pages.count, 2)
        let page = "\(comic)/\(pages[0])"
        for name in ["security.selinux", "system.posix_acl_access", "trusted.x"] {
            XCTAssertEqual(SystemCall.errnoOf { SystemCall.getxattr(page, name, nil, 0) }, EOPNOTSUPP, name)
        }
        XCTAssertEqual(SystemCall.errnoOf { SystemCall.getxattr(page, "user.other", nil, 0) }, ENODATA)
        XCTAssertFalse(try sourceAttribute(page).isEmpty)
        // GNU ls stops asking a device for labels and ACLs once it said "not supported": one
        // getxattr of each kind for the whole directory instead of two round trips per page.
        let traced = try CommandRunner.capture("/usr/bin/strace", ["-e", "trace=getxattr,lgetxattr", "ls", "-l", comic])
        XCTAssertEqual(traced.status, 0, traced.stderr)
        let calls = traced.stderr.split(separator: "\n").filter { $0.contains("xattr(") }
        XCTAssertGreaterThan(calls.count, 0, "ls -l asks for labels: \(traced.stderr)")
        XCTAssertLessThanOrEqual(calls.count, 3, traced.stderr)
    }

    func testBrokenComicsShowOnlyErrorTextSayingWhy() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        for (directory, words) in [("Broken/Not A Comic", "not a comic archive"), ("Broken/Truncated Issue", "corrupted"),
                                   ("Real/Empty RAR4", "no pages")] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path(directory)), ["ERROR.txt"], directory)
            let text = String(decoding: try readFile(mount.path("\(directory)/ERROR.txt")), as: UTF8.self)
            XCTAssertTrue(text.contains(words), "\(directory): \(text)")
        }
        let wrongExtension = try FileManager.default.contentsOfDirectory(atPath: mount.path("Broken/Really A Zip"))
        XCTAssertEqual(wrongExtension.sorted(), ["001.jpg", "002.jpg", "003.jpg"])
    }

    func testSingleComicFileMountsAsItsPages() throws {
        let mount = try MountedLibrary(library: URL(fileURLWithPath: Corpus.fixture("Space Patrol/Space Patrol 002.cbz")))
        let names = try FileManager.default.contentsOfDirectory(atPath: mount.mountpoint.path).sorted()
        XCTAssertEqual(names, (1...10).map { String(format: "%03d", $0) + ($0 >= 7 && $0 <= 8 ? ".png" : ".jpg") }.sorted(), names.description)
    }

    func testNameCollisionsKeepFullFileNames() throws {
        let library = ArchiveMaker.temporaryDirectory("collide")
        defer { try? FileManager.default.removeItem(at: library) }
        let page = [UInt8](try readFile(Corpus.fixture("Space Patrol/cover.jpg")))
        try ArchiveMaker.zip(at: library.appendingPathComponent("Issue 1.cbz"), members: [("01.jpg", page)])
        try ArchiveMaker.zip(at: library.appendingPathComponent("Issue 1.cbr"), members: [("01.jpg", page)])
        try ArchiveMaker.zip(at: library.appendingPathComponent("Issue 2.cbz"), members: [("01.jpg", page)])
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Issue 3"), withIntermediateDirectories: true)
        try ArchiveMaker.zip(at: library.appendingPathComponent("Issue 3.cbz"), members: [("01.jpg", page)])
        let mount = try MountedLibrary(library: library)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.mountpoint.path).sorted(),
                       ["Continue Reading", "Issue 1.cbr", "Issue 1.cbz", "Issue 2", "Issue 3", "Issue 3.cbz"])
        XCTAssertEqual(try readFile(mount.path("Issue 3.cbz/001.jpg")), page)
    }
}

/// An extended attribute read with getfattr, as a user would (Glibc's module has no getxattr).
func attribute(_ name: String, _ path: String) throws -> String {
    try ArchiveMaker.run("/usr/bin/getfattr", ["--only-values", "--absolute-names", "-n", name, path])
}

func sourceAttribute(_ path: String) throws -> String { try attribute("user.inkyfs.source", path) }

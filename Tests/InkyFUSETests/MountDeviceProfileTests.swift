import Foundation
import InkyTestSupport
import XCTest

/// `--split-spreads`, `--rtl`, `--crop-margins`, `--strips` through a real mount: pages are
/// counted at listing from their dimensions, cut in a worker at first lookup, and told apart
/// here by their content (a spread's left half red, its right half blue).
final class MountDeviceProfileTests: XCTestCase {
    private var library: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("profile-lib")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
    }

    /// Two spreads (a JPEG, a PNG) among three portrait pages; the members.
    @discardableResult
    private func spreadsComic(_ name: String, comicInfo: String? = nil) throws -> [(String, [UInt8])] {
        var members = [("p1.jpg", try PageImages.make(.jpeg, width: 1_800, height: 2_700)),
                       ("p2.jpg", try ProfileImages.spread(width: 3_000, height: 2_000)),
                       ("p3.webp", try PageImages.make(.webp, width: 900, height: 1_350)),
                       ("p4.png", try ProfileImages.spread(width: 2_400, height: 1_600, format: "PNG")),
                       ("p5.jpg", try PageImages.make(.jpeg, width: 600, height: 900))]
        if let comicInfo { members.append(("ComicInfo.xml", Array(comicInfo.utf8))) }
        try ArchiveMaker.zip(at: library.appendingPathComponent("\(name).cbz"), members: members, compression: "deflated")
        return members
    }

    private let spreadNames = ["001.jpg", "002-1.jpg", "002-2.jpg", "003.jpg", "004-1.png", "004-2.png", "005.jpg"]
    private let mangaInfo = "<?xml version=\"1.0\"?><ComicInfo><Series>Moon</Series><Manga>YesAndRightToLeft</Manga></ComicInfo>"

    /// The names as `LC_ALL=C ls` lists them: byte order must be reading order.
    private func listed(_ folder: String) throws -> [String] {
        try ArchiveMaker.run("/usr/bin/env", ["LC_ALL=C", "ls", folder]).split(separator: "\n").map(String.init)
    }

    /// True when the spread's pieces in `folder` came out red first (left half first) for both spreads.
    private func redFirst(_ folder: String) throws -> [Bool] {
        let halves = ["002-1.jpg", "002-2.jpg", "004-1.png", "004-2.png"].map { URL(fileURLWithPath: "\(folder)/\($0)") }
        let levels = try ProfileImages.halfLevels(halves)
        for level in levels { XCTAssertEqual(level.left, level.right, accuracy: 5, "each piece is one colour: \(levels)") }
        // Red is lighter than blue in gray (123 and 89 in libvips' gray, 76 and 29 in Pillow's).
        return [levels[0].left > levels[1].left + 20, levels[2].left > levels[3].left + 20]
    }

    func testSpreadsBecomeTwoPagesInReadingOrderFittedInGrayAndARemountStatsThemFromTheIndex() throws {
        try spreadsComic("Spreads")
        let state = library.deletingLastPathComponent().appendingPathComponent(library.lastPathComponent + "-state")
        defer { try? FileManager.default.removeItem(at: state) }
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let arguments = ["--state", state.path, "--fit", "1264x1680", "--grayscale", "--split-spreads"]
        var mount = try MountedLibrary(library: library, arguments: arguments)
        let folder = mount.path("Spreads")
        XCTAssertEqual(try listed(folder), spreadNames, "five pages and two spreads make seven pages, in reading order")
        var sizes: [String: Int64] = [:]
        for name in spreadNames { sizes[name] = try XCTUnwrap(statSize("\(folder)/\(name)"), name) }
        let seen = try PageImages.inspect(spreadNames.map { URL(fileURLWithPath: "\(folder)/\($0)") })
        for (name, page) in zip(spreadNames, seen) {
            XCTAssertTrue(page.width <= 1_264 && page.height <= 1_680, "\(name): \(page)")
            XCTAssertTrue(page.isGray, "\(name): \(page)")
            XCTAssertEqual(page.format, name.hasSuffix(".png") ? "PNG" : "JPEG", "\(name): \(page)")
            XCTAssertEqual(Int64(try readFile("\(folder)/\(name)").count), sizes[name], "\(name): read as stat said")
        }
        XCTAssertEqual([seen[1].width, seen[1].height], [1_260, 1_680], "a half of 3000×2000 fitted")
        XCTAssertEqual(try redFirst(folder), [true, true], "left half first")
        // Every piece keeps its source page's member name.
        XCTAssertEqual(try sourceAttribute("\(folder)/002-2.jpg"), "p2.jpg")
        XCTAssertEqual(mount.unmount(), 0)

        // A remount answers stat of every piece from the index: a page read now kills the worker.
        mount = try MountedLibrary(library: library, arguments: arguments, environment: ["INKYFS_TEST_WORKER_FAULT": "crash-read:Spreads"])
        XCTAssertEqual(try listed(mount.path("Spreads")), spreadNames)
        for name in spreadNames { XCTAssertEqual(statSize(mount.path("Spreads/\(name)")), sizes[name], name) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Spreads/ERROR.txt")))
        XCTAssertEqual(mount.unmount(), 0)

        // The same index with other settings is listed again: without splitting, five pages.
        mount = try MountedLibrary(library: library, arguments: ["--state", state.path, "--fit", "1264x1680", "--grayscale"])
        XCTAssertEqual(try listed(mount.path("Spreads")), ["001.jpg", "002.jpg", "003.jpg", "004.png", "005.jpg"])
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testARightToLeftComicServesTheRightHalfFirstAndRtlForcesIt() throws {
        try spreadsComic("Manga", comicInfo: mangaInfo)
        let plain = try spreadsComic("Plain")
        var mount = try MountedLibrary(library: library, arguments: ["--fit", "1264x1680", "--grayscale", "-o", "split_spreads=1"])
        XCTAssertEqual(try listed(mount.path("Manga")), spreadNames)
        XCTAssertEqual(try redFirst(mount.path("Manga")), [false, false], "Manga=YesAndRightToLeft: right half first")
        XCTAssertEqual(try redFirst(mount.path("Plain")), [true, true], "no ComicInfo: left half first")
        XCTAssertEqual(mount.unmount(), 0)

        mount = try MountedLibrary(library: library, arguments: ["--split-spreads", "--rtl"])
        XCTAssertEqual(try redFirst(mount.path("Plain")), [false, false], "--rtl: right half first")
        XCTAssertEqual(try redFirst(mount.path("Manga")), [false, false])
        // Split without --fit: a portrait JPEG is served as the archive has it, a spread's halves in full size.
        let seen = try PageImages.inspect([URL(fileURLWithPath: mount.path("Plain/002-1.jpg"))])
        XCTAssertEqual([seen[0].width, seen[0].height], [1_500, 2_000])
        XCTAssertEqual(try readFile(mount.path("Plain/005.jpg")), plain[4].1)
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testHalvesAreKeptInTheDiskCacheEvenWhenNothingElseIsConverted() throws {
        try spreadsComic("Halves")
        let cache = library.deletingLastPathComponent().appendingPathComponent(library.lastPathComponent + "-cache")
        let state = library.deletingLastPathComponent().appendingPathComponent(library.lastPathComponent + "-halves.db")
        defer { try? FileManager.default.removeItem(at: cache) }
        defer { try? FileManager.default.removeItem(at: state) }
        let arguments = ["--split-spreads", "--prefetch", "0", "--state", state.path]
        let halves = ["002-1.jpg", "002-2.jpg", "004-1.png", "004-2.png"]
        var mount = try MountedLibrary(library: library, arguments: arguments, environment: ["XDG_CACHE_HOME": cache.path])
        let first = try halves.map { try readFile(mount.path("Halves/\($0)")) }
        XCTAssertEqual(mount.unmount(), 0)

        // A worker asked to read a page now dies: the halves come from the disk cache, byte for byte.
        mount = try MountedLibrary(library: library, arguments: arguments,
                                   environment: ["XDG_CACHE_HOME": cache.path, "INKYFS_TEST_WORKER_FAULT": "crash-read:Halves"])
        XCTAssertEqual(try halves.map { try readFile(mount.path("Halves/\($0)")) }, first)
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testAWebtoonPageIsCutIntoScreenHighStripsAtBlankRows() throws {
        // Seven 1200-row panels between 100-row white gutters: 9100 rows, 800 wide.
        let strip = try ProfileImages.strip(width: 800, panels: 7, panelHeight: 1_200, gutter: 100)
        try ArchiveMaker.zip(at: library.appendingPathComponent("Webtoon.cbz"),
                             members: [("01.jpg", strip), ("02.jpg", try PageImages.make(.jpeg, width: 800, height: 3_000))])
        let mount = try MountedLibrary(library: library, arguments: ["--fit", "1264x1680", "--strips"])
        // 9100 rows > 2 × 1680: ceil(9100 / 1680) = 6 strips; 3000 rows stay one page (shrunk).
        let names = ["001-1.jpg", "001-2.jpg", "001-3.jpg", "001-4.jpg", "001-5.jpg", "001-6.jpg", "002.jpg"]
        XCTAssertEqual(try listed(mount.path("Webtoon")), names)
        let seen = try PageImages.inspect(names.map { URL(fileURLWithPath: mount.path("Webtoon/\($0)")) })
        for (name, page) in zip(names, seen) { XCTAssertTrue(page.width <= 1_264 && page.height <= 1_680, "\(name): \(page)") }
        XCTAssertEqual(seen.prefix(6).map(\.height).reduce(0, +), 9_100, "no row lost or doubled: \(seen)")
        XCTAssertEqual(seen.prefix(6).map(\.width), Array(repeating: 800, count: 6))
        // The first cut (nominally at row 1516) moved up into the gutter at rows 1200–1299; the
        // second found no gutter near enough and stops where the strip holds a screen.
        XCTAssertTrue((1_200..<1_300).contains(seen[0].height), "\(seen[0])")
        XCTAssertEqual(seen[1].height, 1_680, "\(seen[1])")
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testCropMarginsTrimsAWhiteBorderAndLeavesAPageWithoutOne() throws {
        try ArchiveMaker.zip(at: library.appendingPathComponent("Scans.cbz"),
                             members: [("1.png", try ProfileImages.bordered(width: 1_000, height: 1_400, border: 100)),
                                       ("2.jpg", try PageImages.make(.jpeg, width: 600, height: 900))])
        var mount = try MountedLibrary(library: library, arguments: ["--crop-margins", "--fit", "1264x1680"])
        var seen = try PageImages.inspect([URL(fileURLWithPath: mount.path("Scans/001.png")), URL(fileURLWithPath: mount.path("Scans/002.jpg"))])
        XCTAssertEqual([seen[0].width, seen[0].height], [1_000, 1_400], "the 100-pixel border is gone: \(seen[0])")
        XCTAssertEqual([seen[1].width, seen[1].height], [600, 900], "no border, nothing cut: \(seen[1])")
        XCTAssertEqual(mount.unmount(), 0)

        mount = try MountedLibrary(library: library, arguments: ["--fit", "1264x1680"])
        seen = try PageImages.inspect([URL(fileURLWithPath: mount.path("Scans/001.png"))])
        XCTAssertEqual([seen[0].width, seen[0].height], [1_200, 1_600], "without --crop-margins the border stays")
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testPagesThatDoNotDecodeStayWholeOrAreServedAsTheirBytesAndTheComicReads() throws {
        let spread = try ProfileImages.spread(width: 3_000, height: 2_000)
        let truncated = Array(spread.prefix(4_000)) // its header says 3000×2000; its data ends early
        let garbage = Array("not a picture at all\n".utf8)
        let bomb = try PageImages.bombPNG(width: 100_000, height: 50_000)
        try ArchiveMaker.zip(at: library.appendingPathComponent("Broken.cbz"),
                             members: [("1.jpg", truncated), ("2.webp", garbage), ("3.png", bomb), ("4.jpg", spread)])
        let mount = try MountedLibrary(library: library, arguments: ["--fit", "1264x1680", "--split-spreads"])
        let names = ["001-1.jpg", "001-2.jpg", "002.jpg", "003.png", "004-1.jpg", "004-2.jpg"]
        XCTAssertEqual(try listed(mount.path("Broken")), names)
        // The truncated spread was counted from its header; its pieces are its bytes, as any page that
        // does not decode, padded to the size the page was listed with.
        for (name, bytes) in [("001-1.jpg", truncated), ("001-2.jpg", truncated), ("002.jpg", garbage)] {
            let served = try readFile(mount.path("Broken/" + name))
            XCTAssertEqual(PaddedPages.unpadded(served), bytes, name)
            XCTAssertEqual(Int64(served.count), statSize(mount.path("Broken/" + name)), name)
        }
        XCTAssertEqual(try readFile(mount.path("Broken/003.png")), bomb)
        XCTAssertEqual(try PageImages.inspect(readFile(mount.path("Broken/004-2.jpg"))).width, 1_260)
        XCTAssertTrue(mount.logSays("'3.png' not cut: 100000 × 50000 pixels, more than the limit"), mount.logText)
        XCTAssertTrue(mount.logSays("'2.webp' not cut"), mount.logText)
        XCTAssertTrue(mount.isDaemonAlive)
        let log = mount.wholeLogAfterUnmount()
        XCTAssertFalse(log.contains("killed"), log)
    }

    func testADeviceSplitsSpreadsAndStripsNeedAScreen() throws {
        try spreadsComic("Kobo")
        let mount = try MountedLibrary(library: library, arguments: ["--device", "kobo-clara"])
        XCTAssertEqual(try listed(mount.path("Kobo")), spreadNames)
        let page = try PageImages.inspect(readFile(mount.path("Kobo/002-1.jpg")))
        XCTAssertTrue(page.isGray && page.width <= 1_072 && page.height <= 1_448, "\(page)")
        XCTAssertEqual(mount.unmount(), 0)

        // With --as cbz the comic is one file ready for the reader, its spreads already halves.
        let asFile = try MountedLibrary(library: library, arguments: ["--device", "kobo-clara", "--as", "cbz"])
        let cbz = asFile.path("Kobo.cbz")
        let tested = try CommandRunner.capture("/usr/bin/unzip", ["-t", cbz])
        XCTAssertEqual(tested.status, 0, tested.stdout + tested.stderr + asFile.logText)
        let members = try ArchiveMaker.run("/usr/bin/unzip", ["-Z1", cbz]).split(separator: "\n").map(String.init)
        XCTAssertEqual(members, spreadNames)
        XCTAssertEqual(asFile.unmount(), 0)

        let refused = try CommandRunner.inkyfs(["mount", "--strips", library.path, library.path])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("--strips cuts pages one screen high"), refused.stderr)
    }
}

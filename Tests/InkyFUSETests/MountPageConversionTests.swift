import Foundation
import InkyTestSupport
import XCTest

/// `--pages jpeg`, `--fit`, `--grayscale` through a real mount: pages in every format comics carry
/// come out as JPEG or PNG that Pillow decodes, sized at their first lookup (listing converts
/// nothing), sizes kept in the index, and a page that cannot be converted served as it is.
final class MountPageConversionTests: XCTestCase {
    private var library: URL!
    private var scratch: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("convert-lib")
        scratch = ArchiveMaker.temporaryDirectory("convert-scratch")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Every format, 240×360, in a stored CBZ: name → bytes, and the names the mount should show.
    private func everyFormat() throws -> (members: [(String, [UInt8])], served: [String]) {
        let formats: [PageImages.Format] = [.webp, .tiff, .bmp, .gif, .png, .jpeg, .avif, .heif, .jpeg2000, .jxlLossless, .jxlFromJPEG]
        let members = try formats.enumerated().map { index, format in
            (String(format: "p%02d.%@", index + 1, format.fileExtension), try PageImages.make(format, width: 240, height: 360))
        }
        let served = ["001.jpg", "002.jpg", "003.jpg", "004.png", "005.png", "006.jpg", "007.jpg", "008.jpg", "009.jpg", "010.jpg", "011.jpg"]
        return (members, served)
    }

    /// Reads every page through the kernel and decodes it with Pillow.
    private func inspectPages(_ folder: String, _ names: [String]) throws -> [PageImages.Inspection] {
        try PageImages.inspect(names.map { URL(fileURLWithPath: "\(folder)/\($0)") })
    }

    func testEveryFormatIsServedAsJPEGOrPNGWithItsDimensionsAndSizedOnceIntoTheIndex() throws {
        let (members, served) = try everyFormat()
        try ArchiveMaker.zip(at: library.appendingPathComponent("Formats.cbz"), members: members)
        let state = scratch.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let noConverting = ["INKYFS_TEST_WORKER_FAULT": "crash-read:Formats"]
        let arguments = ["--state", state.path, "--pages", "jpeg", "--prefetch", "2"]

        // Listing converts nothing: a page read would kill the worker and leave ERROR.txt.
        var mount = try MountedLibrary(library: library, arguments: arguments, environment: noConverting)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Formats")).sorted(), served)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Formats")).count, served.count)
        XCTAssertEqual(mount.unmount(), 0)

        mount = try MountedLibrary(library: library, arguments: arguments)
        var sizes: [String: Int64] = [:]
        for name in served { sizes[name] = try XCTUnwrap(statSize(mount.path("Formats/\(name)")), "stat converts \(name)") }
        let seen = try inspectPages(mount.path("Formats"), served)
        for (name, page) in zip(served, seen) {
            XCTAssertEqual(page.format, name.hasSuffix(".png") ? "PNG" : "JPEG", "\(name): \(page)")
            XCTAssertEqual([page.width, page.height], [240, 360], "\(name): \(page)")
            XCTAssertEqual(Int64(try readFile(mount.path("Formats/\(name)")).count), sizes[name], "\(name): read as stat said")
        }
        // JPEG and PNG pages pass unchanged; the JPEG XL made from a JPEG is that JPEG, bit-exact.
        XCTAssertEqual(try readFile(mount.path("Formats/005.png")), members[4].1)
        XCTAssertEqual(try readFile(mount.path("Formats/006.jpg")), members[5].1)
        XCTAssertEqual(try readFile(mount.path("Formats/011.jpg")), try PageImages.sourceJPEG(width: 240, height: 360))
        let log = mount.wholeLogAfterUnmount()
        XCTAssertFalse(log.contains("served as it is"), log)

        // A remount answers stat from the index: a conversion now would crash the worker.
        mount = try MountedLibrary(library: library, arguments: arguments, environment: noConverting)
        for name in served { XCTAssertEqual(statSize(mount.path("Formats/\(name)")), sizes[name], name) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Formats/ERROR.txt")))
        XCTAssertEqual(mount.unmount(), 0)

        // Without --pages the same index serves the archive's own names and bytes again.
        mount = try MountedLibrary(library: library, arguments: ["--state", state.path])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Formats")).sorted().first, "001.webp")
        XCTAssertEqual(try readFile(mount.path("Formats/001.webp")), members[0].1)
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testFitAndGrayscaleMakeEveryPageFitTheScreenInGray() throws {
        var (members, served) = try everyFormat()
        members.append(("p12.jpg", try PageImages.make(.jpeg, width: 1_800, height: 2_700)))
        members.append(("p13.webp", try PageImages.make(.webp, width: 3_000, height: 2_000, alpha: true)))
        served += ["012.jpg", "013.jpg"]
        try ArchiveMaker.zip(at: library.appendingPathComponent("Device.cbz"), members: members, compression: "deflated")
        let mount = try MountedLibrary(library: library, arguments: ["--fit", "1264x1680", "-o", "grayscale=1"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Device")).sorted(), served)
        let seen = try inspectPages(mount.path("Device"), served)
        for (name, page) in zip(served, seen) {
            XCTAssertTrue(page.width <= 1_264 && page.height <= 1_680, "\(name): \(page)")
            XCTAssertTrue(page.isGray, "\(name): \(page)")
            XCTAssertEqual(page.format, name.hasSuffix(".png") ? "PNG" : "JPEG", "\(name): \(page)")
        }
        XCTAssertEqual([seen[11].width, seen[11].height], [1_120, 1_680], "shrunk keeping its shape")
        XCTAssertEqual([seen[12].width, seen[12].height], [1_264, 843], "a landscape page fits its width")
        XCTAssertEqual([seen[0].width, seen[0].height], [240, 360], "never enlarged")
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testAPageThatCannotBeConvertedIsServedAsItIs() throws {
        let bomb = try PageImages.bombPNG()
        let broken = Array("not a picture at all\n".utf8)
        let members = [("a.jpg", try PageImages.make(.jpeg, width: 300, height: 400)), ("b.png", bomb), ("c.webp", broken),
                       ("d.tif", try PageImages.make(.tiff, width: 300, height: 400))]
        try ArchiveMaker.zip(at: library.appendingPathComponent("Hostile.cbz"), members: members)
        let mount = try MountedLibrary(library: library, arguments: ["--pages", "jpeg", "--fit", "1264x1680"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Hostile")).sorted(),
                       ["001.jpg", "002.png", "003.jpg", "004.jpg"])
        // The bomb's header declares 10^10 pixels: refused before decoding, so the worker (2 GiB of
        // address space) lives, and the page is its archive's bytes.
        XCTAssertEqual(try readFile(mount.path("Hostile/002.png")), bomb)
        XCTAssertEqual(statSize(mount.path("Hostile/002.png")), Int64(bomb.count))
        // Padded to the size it was listed with (`PageSizeBudget`).
        XCTAssertEqual(PaddedPages.unpadded(try readFile(mount.path("Hostile/003.jpg"))), broken)
        XCTAssertEqual(try PageImages.inspect(readFile(mount.path("Hostile/004.jpg"))).format, "JPEG")
        XCTAssertTrue(mount.logText.contains("100000×100000 pixels, more than the limit"), mount.logText)
        XCTAssertTrue(mount.logText.contains("'c.webp' served as it is"), mount.logText)
        XCTAssertTrue(mount.isDaemonAlive)
        let log = mount.wholeLogAfterUnmount()
        XCTAssertFalse(log.contains("killed"), log)
    }

    func testADeviceNameSetsItsScreenInGrayAndAnUnknownOneIsRefused() throws {
        try ArchiveMaker.zip(at: library.appendingPathComponent("Kobo.cbz"),
                             members: [("1.jpg", try PageImages.make(.jpeg, width: 1_800, height: 2_700))])
        let mount = try MountedLibrary(library: library, arguments: ["-o", "device=kobo-clara"])
        let page = try PageImages.inspect(readFile(mount.path("Kobo/001.jpg")))
        XCTAssertEqual([page.width, page.height], [965, 1_448], "\(page)")
        XCTAssertTrue(page.isGray, "\(page)")
        XCTAssertEqual(mount.unmount(), 0)

        let refused = try CommandRunner.inkyfs(["mount", "--device", "kobo-nope", library.path, scratch.path])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("not a known reader"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("kobo-libra-2"), refused.stderr)
    }

    func testVaultPagesAreConvertedTooInMemoryAndTheIndexNeverSeesThem() throws {
        let fixture = try VaultMountFixture(mountArguments: ["--grayscale", "--fit", "400x600"])
        try fixture.unlock()
        let comic = fixture.path("Vault/Secret Series/Moon Tales 01")
        let names = try FileManager.default.contentsOfDirectory(atPath: comic).sorted()
        XCTAssertEqual(names.count, 10, "\(names)")
        for name in names {
            let size = try XCTUnwrap(statSize("\(comic)/\(name)"), name)
            let bytes = try readFile("\(comic)/\(name)")
            XCTAssertEqual(Int64(bytes.count), size, name)
            let page = try PageImages.inspect(bytes)
            XCTAssertTrue(page.isGray && page.format == "JPEG" && page.width <= 400 && page.height <= 600, "\(name): \(page)")
        }
        // The index holds library comics only: no listing of the vault's object, converted or not.
        let database = fixture.state.appendingPathComponent("state.sqlite").path
        // The daemon may be writing: wait for its lock rather than fail on it.
        let paths = try ArchiveMaker.run("/usr/bin/sqlite3", ["-cmd", ".timeout 10000", database, "SELECT path FROM comic_index"])
        XCTAssertTrue(paths.contains(fixture.library.path), paths)
        XCTAssertFalse(paths.contains(fixture.vault.path), paths)
    }
}

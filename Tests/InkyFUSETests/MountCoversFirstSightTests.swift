import Foundation
import InkyTestSupport
import XCTest

/// `folder.jpg` at first sight, through a real mount: a file manager lists a series folder once
/// and keeps that listing, so the cover must be in the folder's first listing, with the size it
/// will have, before it was made; the first read waits for it. It comes from the first comic that
/// gives one (a damaged first comic no longer leaves the folder without), and a folder where none
/// does loses it once that is known.
final class MountCoversFirstSightTests: XCTestCase {
    private let library = ArchiveMaker.temporaryDirectory("first-sight-lib")
    private let scratch = ArchiveMaker.temporaryDirectory("first-sight-scratch")
    /// Every cover's listed size (`CoverSize.bytes` in InkyCore), typed here: a change to it is a
    /// change to what file managers were told, which this test should name.
    private let coverSize: Int64 = 192 << 10

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: scratch)
    }

    /// A comic of one page of one colour (a noisy JPEG made by Pillow), or a damaged one.
    private func comic(_ folder: String, _ name: String, colour: (Int, Int, Int)?) throws {
        let directory = library.appendingPathComponent(folder)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let page = scratch.appendingPathComponent("\(folder)-\(name).jpg")
        if let colour {
            try ArchiveMaker.python("""
                import sys
                from PIL import Image, ImageChops
                r, g, b = (int(v) for v in sys.argv[2:5])
                base = Image.new("RGB", (1200, 1800), (r, g, b))
                noise = Image.merge("RGB", [Image.effect_noise((1200, 1800), 20)] * 3)
                ImageChops.add(base, noise, 1.0, -128).save(sys.argv[1], quality=90)
                """, arguments: [page.path, "\(colour.0)", "\(colour.1)", "\(colour.2)"])
        } else {
            // A JPEG header and nothing a decoder can use: the comic lists, its cover fails.
            try Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x55, count: 4000)).write(to: page)
        }
        try ArchiveMaker.zip(at: directory.appendingPathComponent(name + ".cbz"), members: [("p1.jpg", Array(try Data(contentsOf: page)))])
    }

    /// Pillow's mean colour of a served cover, after checking it is a whole JPEG 600 px high.
    private func meanColour(_ path: String) throws -> [Double] {
        let output = try ArchiveMaker.run("/usr/bin/python3", ["-c", """
            import sys
            from PIL import Image, ImageStat
            image = Image.open(sys.argv[1])
            image.load()
            assert image.format == "JPEG" and image.size == (400, 600), (image.format, image.size)
            print(*ImageStat.Stat(image.convert("RGB")).mean)
            """, path])
        return output.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
    }

    func testFolderJpgIsInTheFirstListingWithItsSizeAndComesFromTheFirstComicThatGivesOne() throws {
        try comic("Series", "Series 01", colour: (200, 30, 30))
        try comic("Series", "Series 02", colour: (30, 200, 30))
        try comic("Damaged First", "Issue 01", colour: nil)
        try comic("Damaged First", "Issue 02", colour: (30, 30, 200))
        try comic("Nothing Readable", "Issue 01", colour: nil)
        let mount = try MountedLibrary(library: library, environment: ["XDG_CACHE_HOME": scratch.appendingPathComponent("cache").path],
                                       covers: true)
        defer { mount.unmount() }

        for folder in ["Series", "Damaged First", "Nothing Readable"] {
            // The folder's first listing, as a file manager's first visit makes it; stat with no read.
            let listed = try FileManager.default.contentsOfDirectory(atPath: mount.path(folder))
            XCTAssertTrue(listed.contains("folder.jpg"), "\(folder): \(listed)")
            var info = stat()
            XCTAssertEqual(stat(mount.path(folder + "/folder.jpg"), &info), 0, folder)
            XCTAssertEqual(Int64(info.st_size), coverSize, folder)
        }

        // The first read waits for the cover; every byte the listing promised is there.
        let series = try readFile(mount.path("Series/folder.jpg"))
        XCTAssertEqual(Int64(series.count), coverSize)
        for (channel, expected) in zip(try meanColour(mount.path("Series/folder.jpg")), [200.0, 30.0, 30.0]) {
            XCTAssertEqual(channel, expected, accuracy: 12)
        }
        // A first comic that makes no cover: the second's.
        let damaged = try readFile(mount.path("Damaged First/folder.jpg"))
        XCTAssertEqual(Int64(damaged.count), coverSize)
        for (channel, expected) in zip(try meanColour(mount.path("Damaged First/folder.jpg")), [30.0, 30.0, 200.0]) {
            XCTAssertEqual(channel, expected, accuracy: 12)
        }
        // No comic gives one: once its making failed the kernel is told, and the folder lists
        // without it; the mount goes on.
        let folder = mount.path("Nothing Readable")
        XCTAssertTrue(waitUntil(30) { !((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? ["folder.jpg"]).contains("folder.jpg") },
                      mount.logText)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(), ["Issue 01"])
        XCTAssertEqual(errnoName(readErrno(folder + "/folder.jpg")), errnoName(ENOENT))
        XCTAssertEqual(try readFile(mount.path("Series/folder.jpg")), series)
        XCTAssertTrue(mount.isDaemonAlive)
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// Covers through a real mount: a series folder's `folder.jpg` is its first comic's first page,
/// at most 600 px high, made in a worker and kept in the disk cache, which alone serves it after a
/// remount; a library's own `folder.jpg` passes through; `.directory` files for Dolphin.
final class MountCoversTests: XCTestCase {
    private var library: URL!
    private var scratch: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("covers-lib")
        scratch = ArchiveMaker.temporaryDirectory("covers-scratch")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: scratch)
    }

    /// A JPEG of one colour with a little noise (as a scan), `width`×`height`, written by Pillow.
    private func page(_ rgb: (Int, Int, Int), width: Int = 1200, height: Int = 1800) throws -> [UInt8] {
        let file = scratch.appendingPathComponent("page-\(rgb.0)-\(rgb.1)-\(rgb.2)-\(width).jpg")
        try ArchiveMaker.python("""
            import sys
            from PIL import Image, ImageChops
            w, h, r, g, b = (int(v) for v in sys.argv[2:7])
            base = Image.new("RGB", (w, h), (r, g, b))
            noise = Image.merge("RGB", [Image.effect_noise((w, h), 20)] * 3)
            ImageChops.add(base, noise, 1.0, -128).save(sys.argv[1], quality=90)
            """, arguments: [file.path, "\(width)", "\(height)", "\(rgb.0)", "\(rgb.1)", "\(rgb.2)"])
        return Array(try Data(contentsOf: file))
    }

    /// Pillow's view of a served cover: format, size and mean colour.
    private func inspect(_ path: String) throws -> (format: String, width: Int, height: Int, mean: [Double]) {
        let output = try ArchiveMaker.run("/usr/bin/python3", ["-c", """
            import sys
            from PIL import Image, ImageStat
            image = Image.open(sys.argv[1])
            image.load()
            print(image.format, image.size[0], image.size[1], *ImageStat.Stat(image.convert("RGB")).mean)
            """, path])
        let fields = output.split(whereSeparator: \.isWhitespace).map(String.init)
        return (fields[0], Int(fields[1]) ?? -1, Int(fields[2]) ?? -1, fields[3...].compactMap(Double.init))
    }

    /// Waits until the folder's listing shows `name` (a cover is made in the background after
    /// the folder is first listed); false after `seconds`.
    private func appears(_ name: String, in folder: String, within seconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains(name) {
            guard Date() < deadline else { return false }
            usleep(20_000)
        }
        return true
    }

    private func makeSeries() throws {
        let series = library.appendingPathComponent("Series")
        try FileManager.default.createDirectory(at: series, withIntermediateDirectories: true)
        try ArchiveMaker.zip(at: series.appendingPathComponent("Series 01.cbz"),
                             members: [("p1.jpg", try page((200, 30, 30))), ("p2.jpg", try page((30, 30, 200), height: 900))])
        try ArchiveMaker.zip(at: series.appendingPathComponent("Series 02.cbz"), members: [("p1.jpg", try page((30, 200, 30)))])
    }

    func testSeriesFolderShowsItsFirstComicsCoverMadeOnceAndServedFromTheCacheAlone() throws {
        try makeSeries()
        let own = library.appendingPathComponent("Own")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        try ArchiveMaker.zip(at: own.appendingPathComponent("Own 01.cbz"), members: [("p1.jpg", try page((30, 30, 200)))])
        let ownPicture = try page((10, 10, 10), width: 50, height: 50)
        try Data(ownPicture).write(to: own.appendingPathComponent("folder.jpg"))
        let cache = scratch.appendingPathComponent("cache")
        let environment = ["XDG_CACHE_HOME": cache.path]

        var mount = try MountedLibrary(library: library, environment: environment, covers: true)
        XCTAssertTrue(appears("folder.jpg", in: mount.path("Series")), mount.logText)
        let listed = try FileManager.default.contentsOfDirectory(atPath: mount.path("Series")).sorted()
        XCTAssertEqual(listed, ["Series 01", "Series 02", "folder.jpg"], "a .directory is read by its name, never listed")
        let coverPath = mount.path("Series/folder.jpg")
        let cover = try readFile(coverPath)
        XCTAssertEqual(statSize(coverPath), Int64(cover.count))
        let seen = try inspect(coverPath)
        XCTAssertEqual(seen.format, "JPEG")
        XCTAssertEqual([seen.width, seen.height], [400, 600], "shrunk to 600 px high, its shape kept")
        XCTAssertEqual(seen.mean.count, 3)
        for (channel, expected) in zip(seen.mean, [200.0, 30.0, 30.0]) { XCTAssertEqual(channel, expected, accuracy: 12, "\(seen.mean)") }
        XCTAssertEqual(String(decoding: try readFile(mount.path("Series/.directory")), as: UTF8.self), "[Desktop Entry]\nIcon=./folder.jpg\n")
        XCTAssertEqual(String(decoding: try readFile(mount.path("Series/Series 01/.directory")), as: UTF8.self), "[Desktop Entry]\nIcon=./001.jpg\n")
        // A viewer given the comic's folder finds its pages and nothing else to try (feh warned
        // "No Imlib2 loader" for a listed .directory).
        let feh = try CommandRunner.capture("/usr/bin/feh", ["-l", mount.path("Series/Series 01")])
        XCTAssertEqual(feh.status, 0, feh.stderr)
        XCTAssertEqual(feh.stderr, "", "feh was given something that is not a page")
        XCTAssertEqual(feh.stdout.split(separator: "\n").count, 3, "a header and the comic's two pages: \(feh.stdout)")
        // The library's own picture passes through byte for byte, and no second one is made.
        XCTAssertEqual(try readFile(mount.path("Own/folder.jpg")), ownPicture)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Own")).sorted(), ["Own 01", "folder.jpg"])
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/gdk-pixbuf-thumbnailer") {
            let thumbnail = scratch.appendingPathComponent("thumb.png")
            _ = try ArchiveMaker.run("/usr/bin/gdk-pixbuf-thumbnailer", ["-s", "128", coverPath, thumbnail.path])
            let made = try PageImages.inspect([thumbnail])[0]
            XCTAssertEqual(made.format, "PNG")
            XCTAssertEqual(max(made.width, made.height), 128, "\(made)")
        }
        XCTAssertEqual(mount.unmount(), 0)
        let cached = try FileManager.default.contentsOfDirectory(atPath: cache.path + "/inkyfs/covers")
        XCTAssertEqual(cached.count, 1, "\(cached)")

        // A remount with no index serves it from the cache alone: the archive is unreadable now,
        // and (the tests may run as root, whom modes do not stop) a worker that opens it dies.
        let first = library.appendingPathComponent("Series/Series 01.cbz")
        XCTAssertEqual(chmod(first.path, 0), 0)
        defer { chmod(first.path, 0o644) }
        mount = try MountedLibrary(library: library, arguments: ["--state", scratch.appendingPathComponent("fresh.db").path, "--no-list-ahead"],
                                   environment: environment.merging(["INKYFS_TEST_WORKER_FAULT": "crash:Series 01"]) { $1 }, covers: true)
        XCTAssertEqual(try readFile(mount.path("Series/folder.jpg")), cover)
        let log = mount.wholeLogAfterUnmount()
        XCTAssertFalse(log.contains("cover failed"), log)
    }

    func testTheCacheStaysUnderItsCapAndCoversTurnOff() throws {
        for (index, colour) in [(200, 30, 30), (30, 200, 30), (30, 30, 200)].enumerated() {
            let folder = library.appendingPathComponent("S\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try ArchiveMaker.zip(at: folder.appendingPathComponent("S\(index) 01.cbz"), members: [("p1.jpg", try page(colour))])
        }
        var mount = try MountedLibrary(library: library, environment: ["XDG_CACHE_HOME": scratch.appendingPathComponent("big").path], covers: true)
        let covers = try (0..<3).map { index in
            XCTAssertTrue(appears("folder.jpg", in: mount.path("S\(index)")))
            return try readFile(mount.path("S\(index)/folder.jpg"))
        }
        XCTAssertEqual(mount.unmount(), 0)

        // Room for the largest cover alone: each new one pushes out the one used longest ago. (The
        // cache keeps covers as made; folder.jpg serves them padded to the size they were listed with.)
        let made = scratch.appendingPathComponent("big").path + "/inkyfs/covers"
        let madeSizes = try FileManager.default.contentsOfDirectory(atPath: made).map { name in
            try FileManager.default.attributesOfItem(atPath: made + "/" + name)[.size] as? Int ?? 0
        }
        XCTAssertEqual(madeSizes.count, 3)
        let cap = madeSizes.max()! + 100
        let tiny = scratch.appendingPathComponent("tiny")
        mount = try MountedLibrary(library: library, arguments: ["-o", "cover_cache_size=\(cap)B"],
                                   environment: ["XDG_CACHE_HOME": tiny.path], covers: true)
        for index in 0..<3 {
            XCTAssertTrue(appears("folder.jpg", in: mount.path("S\(index)")))
            XCTAssertEqual(try readFile(mount.path("S\(index)/folder.jpg")), covers[index])
        }
        XCTAssertEqual(mount.unmount(), 0)
        let folder = tiny.path + "/inkyfs/covers"
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder)
        let total = try kept.reduce(0) { $0 + (try FileManager.default.attributesOfItem(atPath: folder + "/" + $1)[.size] as? Int ?? 0) }
        XCTAssertLessThanOrEqual(total, cap)
        XCTAssertEqual(kept.count, 1, "\(kept)")
        XCTAssertEqual(try readFile(folder + "/" + kept[0]), try readFile(made + "/" + kept[0]), "the newest stays")

        // A first page that is no image: listed at first (nothing is known before the making),
        // tried once, then no folder.jpg (the kernel is told), and the mount goes on.
        let broken = library.appendingPathComponent("Broken")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try ArchiveMaker.zip(at: broken.appendingPathComponent("Broken 01.cbz"),
                             members: [("p1.jpg", ArchiveMaker.noise(count: 5000, seed: 7)), ("p2.jpg", covers[0])])
        mount = try MountedLibrary(library: library, environment: ["XDG_CACHE_HOME": tiny.path], covers: true)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: mount.path("Broken")).contains("folder.jpg"))
        XCTAssertTrue(mount.logSays("cover failed"), mount.logText)
        XCTAssertTrue(waitUntil(10) { !((try? FileManager.default.contentsOfDirectory(atPath: mount.path("Broken"))) ?? ["folder.jpg"]).contains("folder.jpg") })
        for _ in 0..<2 {
            XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: mount.path("Broken")).contains("folder.jpg"))
            XCTAssertEqual(errnoName(readErrno(mount.path("Broken/folder.jpg"))), errnoName(ENOENT), "a failed cover is no folder.jpg")
            XCTAssertNil(statSize(mount.path("Broken/folder.jpg")))
        }
        XCTAssertEqual(try readFile(mount.path("Broken/Broken 01/002.jpg")), covers[0])
        XCTAssertEqual(mount.logText.components(separatedBy: "cover failed").count - 1, 1, mount.logText)
        XCTAssertEqual(mount.unmount(), 0)

        mount = try MountedLibrary(library: library, arguments: ["-o", "covers=0"], covers: true)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("S0")), ["S0 01"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("S0/S0 01")), ["001.jpg"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("S0/folder.jpg")))
        XCTAssertEqual(mount.unmount(), 0)
    }

    /// `ls -l` of a series folder whose cover is not made returns while the worker making it
    /// is held back (a test hook of debug builds), with `folder.jpg` at the size it will have;
    /// the first read waits for the worker, and reads as a JPEG of that size.
    func testAListingNeverWaitsForACover() throws {
        try FUSEConnections.ensure()   // to see the read waiting in the daemon
        try makeSeries()
        let hold = scratch.appendingPathComponent("hold")
        FileManager.default.createFile(atPath: hold.path, contents: nil)
        let mount = try MountedLibrary(library: library, environment: ["INKYFS_TEST_WORKER_FAULT": "hold-cover:Series 01",
                                                                        "INKYFS_TEST_WORKER_HOLD": hold.path], covers: true)
        let listing = try ArchiveMaker.run("/bin/ls", ["-la", mount.path("Series")])
        XCTAssertTrue(listing.contains("Series 01") && !listing.contains(".directory"), listing)
        XCTAssertTrue(listing.contains("196608 ") && listing.contains("folder.jpg"), "listed with its size, not made yet\n\(listing)")
        // The making is under way and held: the folder is listed and looked up again at once.
        XCTAssertEqual(try ArchiveMaker.run("/bin/ls", ["-la", mount.path("Series")]), listing)
        XCTAssertEqual(statSize(mount.path("Series/folder.jpg")), 196_608)
        // The first read waits in the daemon (the kernel counts it as waiting) for the held
        // worker, and gets the whole cover once the worker may go on: not an error, nor less.
        let read = DispatchGroup()
        let cover = LockedBox<[UInt8]?>(nil)
        let path = mount.path("Series/folder.jpg")
        DispatchQueue.global().async(group: read) { cover.value = try? readFile(path) }
        let connection = try XCTUnwrap(FUSEConnections.connection(of: mount.mountpoint.path))
        XCTAssertTrue(waitUntil(30) { FUSEConnections.waiting(connection) > 0 }, "a read waiting in the daemon")
        XCTAssertEqual(read.wait(timeout: .now()), .timedOut)
        try FileManager.default.removeItem(at: hold)
        XCTAssertEqual(read.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(cover.value?.count, 196_608)
        XCTAssertEqual(try inspect(mount.path("Series/folder.jpg")).height, 600)
        XCTAssertEqual(mount.unmount(), 0)
    }
}

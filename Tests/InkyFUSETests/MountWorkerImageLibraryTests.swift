import Foundation
import InkyTestSupport
import XCTest

/// libvips maps about a hundred shared libraries, most bound at load: a worker that had it made
/// every start cost about 20 ms of CPU, mounts of one comic included, which convert nothing. A
/// worker now loads it only when its mount converts pages or makes covers (`--images`), through
/// a real mount, read in the workers' own /proc maps. A library mount makes folder covers, and
/// only the worker started for a cover loads it: its listings and plain page reads need none.
final class MountWorkerImageLibraryTests: XCTestCase {
    private let scratch = ArchiveMaker.temporaryDirectory("image-library")

    override func tearDown() { try? FileManager.default.removeItem(at: scratch) }

    /// Read to its end: /proc files have no size, and one read gives only their first page.
    private func mapsLibvips(_ pid: Int32) throws -> Bool {
        let maps = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? maps.close() }
        let text = String(decoding: try maps.readToEnd() ?? Data(), as: UTF8.self)
        XCTAssertTrue(text.contains("/libarchive.so"), "worker \(pid)'s maps read whole")
        return text.contains("/libvips.so")
    }

    /// A comic of two JPEG pages, in a folder of its own.
    private func comic(in folder: String) throws -> (url: URL, page: [UInt8]) {
        let directory = scratch.appendingPathComponent(folder)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let page = try PageImages.make(.jpeg, width: 300, height: 450)
        let url = directory.appendingPathComponent("Comic.cbz")
        try ArchiveMaker.zip(at: url, members: [("01.jpg", page), ("02.jpg", page)])
        return (url, page)
    }

    func testAMountOfOneComicServesPagesWithoutLoadingLibvips() throws {
        let (url, page) = try comic(in: "one")
        let mount = try MountedLibrary(library: url, covers: true)
        let served = try Data(contentsOf: mount.mountpoint.appendingPathComponent("001.jpg"))
        XCTAssertEqual(Array(served), page, "the page as the archive holds it")
        let workers = mount.workerPIDs
        XCTAssertFalse(workers.isEmpty, "the read went through a worker, whose maps are read here")
        for pid in workers { XCTAssertFalse(try mapsLibvips(pid), "worker \(pid) of a mount of one comic loaded libvips") }
    }

    func testALibraryMountLoadsLibvipsOnlyInTheWorkerThatMakesACover() throws {
        let (_, page) = try comic(in: "library/Series")
        let mount = try MountedLibrary(library: scratch.appendingPathComponent("library"), covers: true)
        // By name, without listing the series folder (a listing queues its cover's making).
        let served = try Data(contentsOf: mount.mountpoint.appendingPathComponent("Series/Comic/002.jpg"))
        XCTAssertEqual(Array(served), page, "the page as the archive holds it")
        let readers = mount.workerPIDs
        XCTAssertFalse(readers.isEmpty, "the read went through a worker, whose maps are read here")
        for pid in readers { XCTAssertFalse(try mapsLibvips(pid), "worker \(pid) loaded libvips for a listing and a page") }

        let cover = try Data(contentsOf: mount.mountpoint.appendingPathComponent("Series/folder.jpg"))
        XCTAssertEqual(Array(cover.prefix(3)), [0xFF, 0xD8, 0xFF], "folder.jpg is a JPEG a worker made")
        let imageWorkers = try mount.workerPIDs.filter { try mapsLibvips($0) }
        XCTAssertEqual(imageWorkers.count, 1, "the cover's worker, and only it, maps libvips")
        XCTAssertFalse(imageWorkers.contains { readers.contains($0) }, "a worker started without libvips cannot make covers")
        let again = try Data(contentsOf: mount.mountpoint.appendingPathComponent("Series/Comic/001.jpg"))
        XCTAssertEqual(Array(again), page)
    }

    /// The positive control: a mount that converts loads it, and the page comes out converted.
    func testAMountThatConvertsLoadsLibvipsAndConverts() throws {
        _ = try comic(in: "gray/Series")
        let mount = try MountedLibrary(library: scratch.appendingPathComponent("gray"), arguments: ["--grayscale"])
        let path = mount.mountpoint.appendingPathComponent("Series/Comic/001.jpg").path
        let mode = try ArchiveMaker.run("/usr/bin/python3", ["-c", """
            import sys
            from PIL import Image
            print(Image.open(sys.argv[1]).mode)
            """, path])
        XCTAssertEqual(mode.trimmingCharacters(in: .whitespacesAndNewlines), "L", "the page was converted to grayscale")
        let workers = mount.workerPIDs
        XCTAssertFalse(workers.isEmpty)
        XCTAssertTrue(try workers.contains { try mapsLibvips($0) }, "a converting worker maps libvips")
    }
}

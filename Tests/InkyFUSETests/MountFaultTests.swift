import Foundation
import InkyTestSupport
import XCTest

/// A library on a disk that fails some reads with EIO (a FUSE passthrough with injected
/// faults): the pages it touches fail with EIO, an archive that cannot be read at all shows
/// ERROR.txt, everything else is served, and once the disk is healthy the pages read again.
final class MountFaultTests: XCTestCase {
    func testALibraryOnAFailingDiskFailsOnlyWhatTheFaultsTouch() throws {
        let source = ArchiveMaker.temporaryDirectory("faulty-source")
        defer { try? FileManager.default.removeItem(at: source) }
        let pages = (0..<5).map { ArchiveMaker.noise(count: 40_000 + $0, seed: UInt64(700 + $0)) }
        let members = pages.enumerated().map { ("p\($0.offset + 1).jpg", $0.element) }
        for name in ["Good.cbz", "Bad Page.cbz", "Unreadable.cbz"] {
            try ArchiveMaker.zip(at: source.appendingPathComponent(name), members: members)
        }
        let tar = source.appendingPathComponent("Bad Page Tar.cbt")
        try ArchiveMaker.python("""
            import io, sys, tarfile
            with tarfile.open(sys.argv[1], "w") as t:
                for i in range(5):
                    data = open(sys.argv[2 + i], "rb").read()
                    info = tarfile.TarInfo(f"p{i + 1}.jpg"); info.size = len(data); t.addfile(info, io.BytesIO(data))
            """, arguments: [tar.path] + (try pages.enumerated().map { index, page in
                let file = source.appendingPathComponent(".page\(index)")
                try Data(page).write(to: file)
                return file.path
            }))
        for index in 0..<5 { try FileManager.default.removeItem(at: source.appendingPathComponent(".page\(index)")) }
        // Bytes in the middle of page 3's stored data, in each archive.
        func pageThree(in name: String) throws -> Range<Int> {
            let bytes = try Data(contentsOf: source.appendingPathComponent(name))
            let start = try XCTUnwrap(bytes.range(of: Data(pages[2]))).lowerBound
            return start + 10_000..<start + 10_100
        }
        let disk = try FaultFS(source: source)
        try disk.fail([("Bad Page.cbz", try pageThree(in: "Bad Page.cbz")), ("Bad Page Tar.cbt", try pageThree(in: "Bad Page Tar.cbt")),
                       ("Unreadable.cbz", 0..<Int.max)])
        let state = ArchiveMaker.temporaryDirectory("faulty-state")
        defer { try? FileManager.default.removeItem(at: state) }
        let mount = try MountedLibrary(library: disk.mountpoint, arguments: ["--window", "0", "--prefetch", "0", "--state", state.path])

        for page in 0..<5 { XCTAssertEqual(try readFile(mount.path("Good/00\(page + 1).jpg")), pages[page], "Good \(page + 1)") }
        for comic in ["Bad Page", "Bad Page Tar"] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path(comic)).sorted(), (1...5).map { "00\($0).jpg" }, comic)
            for page in [0, 1, 3, 4] { XCTAssertEqual(try readFile(mount.path("\(comic)/00\(page + 1).jpg")), pages[page], "\(comic) \(page + 1)") }
            XCTAssertEqual(readErrno(mount.path("\(comic)/003.jpg")), EIO, "\(comic): the page on the bad sectors fails with EIO")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path(comic)).count, 5, "\(comic): one bad page is not a broken comic")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Unreadable")), ["ERROR.txt"])
        let text = String(decoding: try readFile(mount.path("Unreadable/ERROR.txt")), as: UTF8.self)
        XCTAssertTrue(text.contains("Input/output error"), text)
        XCTAssertTrue(mount.isDaemonAlive, mount.logText)

        try disk.heal()
        for comic in ["Bad Page", "Bad Page Tar"] {
            XCTAssertEqual(try readFile(mount.path("\(comic)/003.jpg")), pages[2], "\(comic): readable once the disk is")
        }
        // The comic the disk would not read at all comes back by itself, without a remount.
        let deadline = Date().addingTimeInterval(10)
        while (try? FileManager.default.contentsOfDirectory(atPath: mount.path("Unreadable")).count) != 5 && Date() < deadline { usleep(200_000) }
        XCTAssertEqual(try readFile(mount.path("Unreadable/004.jpg")), pages[3], "listed again once the disk is healthy")
        XCTAssertTrue(mount.isDaemonAlive, mount.logText)
        XCTAssertEqual(mount.unmount(), 0)

        // Nor does the index keep an I/O error for the next mount.
        try disk.fail([("Unreadable.cbz", 0..<Int.max)])
        try FileManager.default.removeItem(at: state)
        let failing = try MountedLibrary(library: disk.mountpoint, arguments: ["--state", state.path])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: failing.path("Unreadable")), ["ERROR.txt"])
        failing.unmount()
        try disk.heal()
        let again = try MountedLibrary(library: disk.mountpoint, arguments: ["--state", state.path])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: again.path("Unreadable")).count, 5, "the index kept no I/O error")
    }

    private func readErrno(_ path: String) -> Int32 {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        return read(fd, &buffer, buffer.count) < 0 ? errno : 0
    }
}

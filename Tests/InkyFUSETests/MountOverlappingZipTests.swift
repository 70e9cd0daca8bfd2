import Foundation
import InkyTestSupport
import XCTest

/// ZIPs whose central-directory records alias one local header (an overlap bomb) or run one
/// member's data into the next header are refused with "overlapping entries": no page is ever
/// listed that cannot be read as itself. An honest ZIP beside them is served as always.
final class MountOverlappingZipTests: XCTestCase {
    /// Writes a ZIP of one stored or deflated member `0000.jpg` (named `localName` in its local
    /// header), and central-directory records `NNNN.jpg` at the given local header offsets.
    private func writeZip(_ url: URL, offsets: [Int], localName: String = "0000.jpg", deflated: Bool = false) throws {
        try ArchiveMaker.python("""
            import json, random, struct, sys, zlib
            out, offsets, local_name, deflated = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3].encode(), sys.argv[4] == "1"
            page = b"\\xff\\xd8\\xff\\xe0" + random.Random(1).randbytes(20000)
            crc = zlib.crc32(page)
            method = 8 if deflated else 0
            data = zlib.compress(page)[2:-4] if deflated else page
            body = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(data), len(page), len(local_name), 0) + local_name + data
            directory = b""
            for i, offset in enumerate(offsets):
                name = f"{i:04}.jpg".encode()
                directory += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc, len(data), len(page),
                                         len(name), 0, 0, 0, 0, 0, offset) + name
            end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(offsets), len(offsets), len(directory), len(body), 0)
            open(out, "wb").write(body + directory + end)
            """, arguments: [url.path, "\(offsets)", localName, deflated ? "1" : "0"])
    }

    func testAliasedAndOverlappingEntriesAreRefusedInWords() throws {
        let library = ArchiveMaker.temporaryDirectory("overlap")
        defer { try? FileManager.default.removeItem(at: library) }
        let hostile = [
            "1000 names one header": (Array(repeating: 0, count: 1_000), "0500.jpg", false),
            "2 names one header": ([0, 0], "0000.jpg", false),
            "2 names one header, local name neither": ([0, 0], "zzzz.jpg", false),
            "2 deflated names one header": ([0, 0], "0001.jpg", true),
            "second header inside the first member": ([0, 100], "0000.jpg", false),
        ]
        for (name, layout) in hostile {
            try writeZip(library.appendingPathComponent("\(name).cbz"), offsets: layout.0, localName: layout.1, deflated: layout.2)
        }
        try writeZip(library.appendingPathComponent("honest.cbz"), offsets: [0])
        let mount = try MountedLibrary(library: library)
        for name in hostile.keys {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path(name)), ["ERROR.txt"], name)
            let text = String(decoding: try readFile(mount.path("\(name)/ERROR.txt")), as: UTF8.self)
            XCTAssertTrue(text.contains("overlapping entries"), "\(name): \(text)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("honest")), ["001.jpg"])
        let page = try CommandRunner.capture("/bin/cat", [mount.path("honest/001.jpg")])
        XCTAssertEqual(page.status, 0, page.stderr)
        XCTAssertTrue(mount.isDaemonAlive)
    }
}

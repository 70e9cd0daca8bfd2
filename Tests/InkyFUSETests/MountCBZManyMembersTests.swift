import Foundation
import InkyTestSupport
import XCTest

/// `--as cbz` of a comic with more members than the classic end record can count (65,535): the
/// CBZ must carry the count in ZIP64 end records, and zip readers that are not inkyfs must find
/// every member and its CRC-32 through a real mount: Info-ZIP's `unzip -t`, 7-Zip's `7zz t`,
/// libarchive's `bsdtar -t`, and Python's zipfile reading the records byte by byte. The source
/// is a stored ZIP of 65,540 tiny distinct pages made by Python, so its CRC-32s are zipfile's.
final class MountCBZManyMembersTests: XCTestCase {
    static let pages = 65_540

    func testAComicOfMoreThan65535PagesIsAZIP64ThatOtherZipReadersRead() throws {
        let library = ArchiveMaker.temporaryDirectory("many-lib")
        defer { try? FileManager.default.removeItem(at: library) }
        let source = library.appendingPathComponent("Many.cbz")
        try ArchiveMaker.python(Self.makeSource, arguments: [source.path, String(Self.pages)])
        let mount = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead", "--no-continue",
                                                                     "--max-pages", "70000"])
        defer { mount.unmount() }
        let cbz = mount.path("Many.cbz")
        try mount.failingIfHung(after: 300, "testing a CBZ of \(Self.pages) members with three zip readers") {
            try ArchiveMaker.python(Self.zip64Check, arguments: [cbz, source.path, String(Self.pages)])

            // Info-ZIP reads every member and checks its CRC-32.
            let unzip = try CommandRunner.capture("/usr/bin/unzip", ["-tq", cbz])
            XCTAssertEqual(unzip.status, 0, unzip.stderr)
            XCTAssertTrue(unzip.stdout.contains("No errors detected in compressed data of \(cbz)."), unzip.stdout)

            // 7-Zip tests every member; its summary counts them.
            let sevenZip = try CommandRunner.capture("/usr/bin/7zz", ["t", cbz])
            XCTAssertEqual(sevenZip.status, 0, sevenZip.stderr)
            XCTAssertTrue(sevenZip.stdout.contains("Everything is Ok"), sevenZip.stdout)
            XCTAssertTrue(sevenZip.stdout.contains("Files: \(Self.pages)"), String(sevenZip.stdout.suffix(400)))

            // libarchive walks the local headers front to back: every name, in order.
            let listed = try ArchiveMaker.run("/usr/bin/bsdtar", ["-tf", cbz]).split(separator: "\n")
            XCTAssertEqual(listed.count, Self.pages)
            XCTAssertEqual(listed.first, "00001.jpg")
            XCTAssertEqual(listed.last, Substring(String(format: "%05d.jpg", Self.pages)))
        }
        XCTAssertEqual(mount.unmount(), 0)
    }

    /// Page N holds a JPEG start marker and N, so every page differs and has its own CRC-32.
    static let makeSource = """
        import sys, zipfile
        path, count = sys.argv[1], int(sys.argv[2])
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            for n in range(1, count + 1):
                info = zipfile.ZipInfo("p%06d.jpg" % n, (2020, 1, 1, 0, 0, 0))
                z.writestr(info, b"\\xff\\xd8\\xff\\xe0" + str(n).encode() * 3)
        """

    /// The end of the file read as APPNOTE 4.3.14-16 says, then zipfile over it: the classic count
    /// fields saturated, the ZIP64 record's count exact, every page's bytes and CRC-32 the source's.
    static let zip64Check = """
        import os, struct, sys, zipfile
        cbz, source, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
        size = os.stat(cbz).st_size
        with open(cbz, "rb") as f:
            f.seek(size - 22); end = f.read(22)
            assert end[:4] == b"PK\\x05\\x06", end
            assert struct.unpack("<HH", end[8:12]) == (0xFFFF, 0xFFFF), end
            f.seek(size - 42); locator = f.read(20)
            assert locator[:4] == b"PK\\x06\\x07", locator
            (record,) = struct.unpack("<Q", locator[8:16])
            f.seek(record); end64 = f.read(56)
            assert end64[:4] == b"PK\\x06\\x06", end64
            here, total = struct.unpack("<QQ", end64[24:40])
            assert here == total == count, (here, total)
        ours, theirs = zipfile.ZipFile(cbz), zipfile.ZipFile(source)
        mine = ours.infolist()
        assert [i.filename for i in mine] == ["%05d.jpg" % n for n in range(1, count + 1)], [i.filename for i in mine[:3]]
        assert [i.CRC for i in mine] == [i.CRC for i in theirs.infolist()], "the source's CRC-32s"
        assert ours.testzip() is None
        for n in (1, 65535, 65536, count):
            assert ours.read("%05d.jpg" % n) == theirs.read("p%06d.jpg" % n), n
        """
}

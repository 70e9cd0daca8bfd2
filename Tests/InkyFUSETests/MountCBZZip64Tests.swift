import Foundation
import InkyTestSupport
import XCTest

/// `--as cbz` of a comic past 4 GiB through a real mount: the CBZ must be a ZIP64 (a member
/// larger than 4 GiB, the last member and the central directory past 4 GiB, where the classic
/// fields cannot reach) that zip readers other than inkyfs take: Info-ZIP's unzip and Python's
/// zipfile, the ZIP64 end records read byte by byte, every CRC-32 the source's, the last page
/// read back exact from its 4 KiB boundary. The comic is a sparse ZIP (4.2 GiB that take no
/// disk) and nothing reads its big page (checked: the workers read under 1 GiB): seconds.
final class MountCBZZip64Tests: XCTestCase {
    func testAComicPast4GiBIsAZIP64ThatOtherZipReadersRead() throws {
        let library = ArchiveMaker.temporaryDirectory("zip64-lib")
        let scratch = ArchiveMaker.temporaryDirectory("zip64-scratch")
        defer {
            try? FileManager.default.removeItem(at: library)
            try? FileManager.default.removeItem(at: scratch)
        }
        let bigSize: Int64 = 4_300 << 20
        // A small page between the big one and the last: a reader's block below the last member's
        // header (unzip reads 8 KiB-aligned) then ends in it, not in the 4.2 GiB page.
        let middle = ArchiveMaker.noise(count: 100_003, seed: 63)
        let last = ArchiveMaker.noise(count: 300_001, seed: 64)
        let source = library.appendingPathComponent("Big.cbz")
        try SparseZip.write(to: source, bigPages: 1, bigSize: bigSize, after: [middle, last])
        let lastFile = scratch.appendingPathComponent("last.jpg")
        try Data(last).write(to: lastFile)
        // A page past the default 128 MiB and a comic past the default 4 GiB: both limits raised.
        let mount = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead", "--no-continue",
                                                                     "--max-page-size", "5G", "--max-comic-size", "5G"])
        defer { mount.unmount() }
        let cbz = mount.path("Big.cbz")
        try mount.failingIfHung(after: 120, "reading the directory and last page of a CBZ past 4 GiB") {
            try ArchiveMaker.python(Self.zip64Check, arguments: [cbz, source.path, lastFile.path, String(bigSize), String(middle.count)])
            // Info-ZIP's listing: the pages, their sizes and their total, read through the ZIP64 records.
            let listed = try ArchiveMaker.run("/usr/bin/unzip", ["-l", cbz])
            let rows = listed.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
            XCTAssertEqual(rows.filter { $0.last?.hasSuffix(".jpg") == true }.map { "\($0.first!) \($0.last!)" },
                           ["\(bigSize) 001.jpg", "\(middle.count) 002.jpg", "\(last.count) 003.jpg"], listed)
            XCTAssertTrue(rows.contains(["\(bigSize + Int64(middle.count + last.count))", "3", "files"]), listed)
            // unzip seeks to the last member's local header, past 4 GiB, and checks its CRC-32.
            let extracted = try CommandRunner.captureBytes("/usr/bin/unzip", ["-p", cbz, "003.jpg"])
            XCTAssertEqual(extracted.status, 0, extracted.stderr)
            XCTAssertTrue(extracted.stdout == last, "unzip -p gave \(extracted.stdout.count) bytes, not the last page's")
        }
        let read = mount.workerPIDs.compactMap { Self.bytesRead(by: $0) }.reduce(0, +)
        XCTAssertLessThan(read, 1 << 30, "the workers read \(read) bytes: the 4.2 GiB page was read (a pass for its CRC-32, or for a neighbour)")
        XCTAssertEqual(mount.unmount(), 0)
    }

    /// What a process has read (`rchar` in /proc/PID/io), holes included.
    private static func bytesRead(by pid: Int32) -> Int64? {
        guard let io = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
        return io.split(separator: "\n").first { $0.hasPrefix("rchar: ") }.flatMap { Int64($0.dropFirst(7)) }
    }

    /// The end of the file read as the ZIP64 format says (APPNOTE 4.3.14-16), then Python's
    /// zipfile over it: names, sizes, CRC-32s (the source's, as its zipper wrote them), the last
    /// member past 4 GiB, stored, its data ending on a 4 KiB boundary, its bytes (CRC checked).
    static let zip64Check = """
        import os, struct, sys, zipfile
        cbz, source, last, big, middle = sys.argv[1], sys.argv[2], open(sys.argv[3], "rb").read(), int(sys.argv[4]), int(sys.argv[5])
        size = os.stat(cbz).st_size
        with open(cbz, "rb") as f:
            f.seek(size - 22); end = f.read(22)
            assert end[:4] == b"PK\\x05\\x06", end
            count16, dirsize32, diroffset32 = struct.unpack("<HII", end[10:20])
            assert (count16, dirsize32, diroffset32) == (0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (count16, dirsize32, diroffset32)
            f.seek(size - 42); locator = f.read(20)
            assert locator[:4] == b"PK\\x06\\x07", locator
            (record,) = struct.unpack("<Q", locator[8:16])
            assert record == size - 42 - 56, (record, size)
            f.seek(record); end64 = f.read(56)
            assert end64[:4] == b"PK\\x06\\x06", end64
            count, total, dirsize, diroffset = struct.unpack("<QQQQ", end64[24:56])
            assert count == total == 3, (count, total)
            assert diroffset > 1 << 32 and diroffset + dirsize == record, (diroffset, dirsize, record)
            assert diroffset % 4096 == 0, diroffset
        z = zipfile.ZipFile(cbz)
        infos = z.infolist()
        assert [i.filename for i in infos] == ["001.jpg", "002.jpg", "003.jpg"], infos
        assert [i.file_size for i in infos] == [big, middle, len(last)], infos
        assert [i.compress_size for i in infos] == [big, middle, len(last)], infos
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)
        assert [i.CRC for i in infos] == [i.CRC for i in zipfile.ZipFile(source).infolist()], "the source's CRC-32s"
        member = infos[-1]
        assert member.header_offset > 1 << 32, member.header_offset
        with open(cbz, "rb") as f:
            f.seek(member.header_offset); local = f.read(30)
            assert local[:4] == b"PK\\x03\\x04", local
            names, extra = struct.unpack("<HH", local[26:30])
            data = member.header_offset + 30 + names + extra
            assert (data + len(last)) % 4096 == 0, data
        assert z.read("003.jpg") == last, "the last page's bytes"
        """
}

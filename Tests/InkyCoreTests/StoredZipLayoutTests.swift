import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// The layout alone, assembled into files that real ZIP readers check: every byte range's
/// pieces, the size without the directory, and ZIP64 for many members and past 4 GiB.
final class StoredZipLayoutTests: XCTestCase {
    private var scratch: URL!

    override func setUpWithError() throws { scratch = ArchiveMaker.temporaryDirectory("zip-layout") }
    override func tearDown() { try? FileManager.default.removeItem(at: scratch) }

    /// The file the layout describes, from its pieces over `chunk`-sized ranges.
    private func assemble(_ layout: StoredZipLayout, _ data: [[UInt8]], chunk: Int) -> [UInt8] {
        var out: [UInt8] = []
        var offset: Int64 = 0
        while offset < layout.totalSize {
            for piece in layout.pieces(offset: offset, length: chunk) {
                switch piece {
                case .bytes(let bytes): out += bytes
                case .member(let index, let range): out += data[index][Int(range.lowerBound)..<Int(range.upperBound)]
                }
            }
            offset += Int64(chunk)
        }
        return out
    }

    private func layout(_ data: [(String, [UInt8])], alignment: Int64 = StoredZipLayout.pageAlignment) -> StoredZipLayout {
        let members = data.map { StoredZipLayout.Member(name: $0.0, size: Int64($0.1.count), crc32: CRC32.checksum($0.1)) }
        XCTAssertEqual(StoredZipLayout.size(of: members, alignment: alignment),
                       StoredZipLayout(members: members, modified: 0, alignment: alignment).totalSize)
        return StoredZipLayout(members: members, modified: 1_700_000_000, alignment: alignment)
    }

    func testAnyChunkingAssemblesTheSameZipThatReadersAccept() throws {
        let data = [("001.jpg", ArchiveMaker.noise(count: 70_000, seed: 1)), ("002.png", []),
                    ("003 é.jpg", ArchiveMaker.noise(count: 3, seed: 2)), ("ComicInfo.xml", Array("<ComicInfo/>".utf8))]
        let zip = layout(data)
        let whole = assemble(zip, data.map(\.1), chunk: Int(zip.totalSize))
        XCTAssertEqual(Int64(whole.count), zip.totalSize)
        for chunk in [7, 30, 4096, 65_536] { XCTAssertEqual(assemble(zip, data.map(\.1), chunk: chunk), whole, "chunk \(chunk)") }
        XCTAssertEqual(zip.pieces(offset: zip.totalSize, length: 10), [])
        XCTAssertEqual(zip.centralDirectoryOffset % 4096, 0, "the directory shares no kernel page with a member")
        // Each member's bytes end on a kernel page boundary: no kernel page holds two members' bytes.
        var at: Int64 = 0
        for piece in zip.pieces(offset: 0, length: Int(zip.totalSize)) {
            switch piece {
            case .bytes(let bytes): at += Int64(bytes.count)
            case .member(let index, let range):
                at += range.upperBound - range.lowerBound
                XCTAssertEqual(at % 4096, 0, "\(data[index].0) ends on a boundary")
            }
        }
        let file = scratch.appendingPathComponent("a.zip")
        try Data(whole).write(to: file)
        // In the POSIX locale too (an account with no LANG): there unzip spells "é" as #U00e9 in a
        // record with an extra field and as it is in one without, so a local header padded and a
        // directory record not were "mismatching" (exit 1) until both carried one.
        for locale in ["C.UTF-8", "C"] {
            let unzip = try CommandRunner.capture("/usr/bin/env", ["LC_ALL=\(locale)", "unzip", "-tq", file.path])
            XCTAssertEqual(unzip.status, 0, "\(locale): " + unzip.stdout + unzip.stderr)
            XCTAssertTrue(unzip.stdout.contains("No errors detected in compressed data of \(file.path)."), "\(locale): " + unzip.stdout)
        }
        try ArchiveMaker.python("""
            import sys, zipfile, datetime
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            assert z.namelist() == ["001.jpg", "002.png", "003 é.jpg", "ComicInfo.xml"], z.namelist()
            assert z.getinfo("001.jpg").date_time == (2023, 11, 14, 22, 13, 20), z.getinfo("001.jpg").date_time
            """, arguments: [file.path])
    }

    /// 70,000 members pass the classic count field: ZIP64 end records (packed: aligned, 70,000
    /// one-byte members would make a 280 MB file).
    func testManyMembersGetZip64EndRecords() throws {
        let data = (0..<70_000).map { (String(format: "%05d.jpg", $0), [UInt8(truncatingIfNeeded: $0)]) }
        let zip = layout(data, alignment: 1)
        let file = scratch.appendingPathComponent("many.zip")
        try Data(assemble(zip, data.map(\.1), chunk: 1 << 20)).write(to: file)
        try ArchiveMaker.python("""
            import sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert len(z.namelist()) == 70000 and z.testzip() is None
            """, arguments: [file.path])
    }

    /// A member past 4 GiB (a sparse file of zeros, whose CRC the test does not check): the
    /// member after it is found through ZIP64 sizes and offsets and reads back.
    func testMembersPastFourGiBUseZip64() throws {
        let big: Int64 = 4 << 30 + 5
        let tail = ArchiveMaker.noise(count: 1_000, seed: 3)
        let members = [StoredZipLayout.Member(name: "big.jpg", size: big, crc32: 0),
                       StoredZipLayout.Member(name: "after.jpg", size: Int64(tail.count), crc32: CRC32.checksum(tail))]
        let zip = StoredZipLayout(members: members, modified: 0)
        XCTAssertEqual(StoredZipLayout.size(of: members), zip.totalSize)
        let file = scratch.appendingPathComponent("big.zip")
        FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        // Every piece but the big member's zeros, which the sparse file holds for free.
        var offset: Int64 = 0
        for piece in zip.pieces(offset: 0, length: Int(zip.totalSize)) {
            switch piece {
            case .bytes(let bytes):
                try handle.seek(toOffset: UInt64(offset))
                handle.write(Data(bytes))
                offset += Int64(bytes.count)
            case .member(let index, let range):
                if index == 1 {
                    try handle.seek(toOffset: UInt64(offset))
                    handle.write(Data(tail))
                }
                offset += range.upperBound - range.lowerBound
            }
        }
        XCTAssertEqual(offset, zip.totalSize)
        try handle.truncate(atOffset: UInt64(offset))
        try ArchiveMaker.python("""
            import sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert [i.file_size for i in z.infolist()] == [4 * 2**30 + 5, 1000]
            assert z.getinfo("after.jpg").header_offset > 2**32
            assert len(z.read("after.jpg")) == 1000
            """, arguments: [file.path])
    }

    /// A non-ASCII name past 4 GiB whose data would need no padding: its directory record has the
    /// ZIP64 offset field, so its local header gets a padding field too (a whole page of it),
    /// or unzip in a C locale calls the two names different. Arithmetic only: no 4 GiB of bytes.
    func testANonASCIINameHasAnExtraFieldInBothRecordsOrNeither() throws {
        let name = "é.jpg"
        let big = StoredZipLayout.Member(name: "big.jpg", size: 5 << 30, crc32: 1)
        // 30 + 6 bytes of header and 4,060 of data end on a page boundary: no padding of its own.
        let small = StoredZipLayout.Member(name: name, size: 4096 - 30 - Int64(name.utf8.count), crc32: 2)
        let zip = StoredZipLayout(members: [big, small], modified: 0)
        XCTAssertEqual(StoredZipLayout.size(of: [big, small]), zip.totalSize)
        let headers = zip.pieces(offset: 0, length: Int(zip.centralDirectoryOffset)).compactMap { piece -> [UInt8]? in
            if case .bytes(let bytes) = piece { bytes } else { nil }
        }
        XCTAssertEqual(headers.count, 2, "two local headers")
        let second = headers[1]
        XCTAssertEqual(Array(second[30..<36]), Array(name.utf8), "the second header is the é's")
        XCTAssertEqual(Int(second[28]) | Int(second[29]) << 8, 4096, "its header has an extra field: a page of padding")
        XCTAssertEqual(zip.centralDirectoryOffset % 4096, 0)
        // The directory records: the second has the ZIP64 offset field (12 bytes), and no more.
        let tail = zip.pieces(offset: zip.centralDirectoryOffset, length: 1 << 16).flatMap { piece -> [UInt8] in
            if case .bytes(let bytes) = piece { bytes } else { [] }
        }
        let firstExtra = Int(tail[30]) | Int(tail[31]) << 8
        let record = 46 + 7 + firstExtra
        XCTAssertEqual(Array(tail[record + 46 ..< record + 52]), Array(name.utf8))
        XCTAssertEqual(Int(tail[record + 30]) | Int(tail[record + 31]) << 8, 12, "the ZIP64 offset field")
    }
}

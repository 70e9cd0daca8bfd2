import XCTest
@testable import InkyCore

final class ArchiveFormatTests: XCTestCase {
    private func sniff(_ bytes: [UInt8], at offset: Int = 0) -> ArchiveFormat? {
        var block = [UInt8](repeating: 0, count: 512)
        block.replaceSubrange(offset..<offset + bytes.count, with: bytes)
        return ArchiveFormat.sniff(block)
    }

    func testMagicBytesDecide() {
        XCTAssertEqual(sniff([0x50, 0x4B, 0x03, 0x04]), .zip)
        XCTAssertEqual(sniff([0x50, 0x4B, 0x05, 0x06]), .zip, "an empty zip is still a zip")
        XCTAssertEqual(sniff(Array("Rar!\u{1A}\u{07}\u{00}".utf8)), .rar4)
        XCTAssertEqual(sniff(Array("Rar!\u{1A}\u{07}\u{01}\u{00}".utf8)), .rar5)
        XCTAssertEqual(sniff([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]), .sevenZip)
        XCTAssertEqual(sniff(Array("ustar".utf8), at: 257), .tar)
        XCTAssertEqual(sniff([0x1F, 0x8B]), .gzip)
        XCTAssertEqual(sniff(Array("%PDF-1.7".utf8)), .pdf)
        XCTAssertEqual(sniff(Array("**ACE**".utf8), at: 7), .ace)
    }

    /// A ZIP with something in front is found by its end record, whose comment must run
    /// exactly to the end of the file; a record-like run inside the comment does not count.
    func testTheZipEndRecordIsFoundBehindItsComment() {
        func endRecord(comment: [UInt8]) -> [UInt8] {
            [0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 16) + [UInt8(comment.count & 0xFF), UInt8(comment.count >> 8)] + comment
        }
        let stub = [UInt8](repeating: 0x90, count: 100)
        XCTAssertEqual(ArchiveFormat.sniffTail(stub + endRecord(comment: [])), .zip)
        let fake: [UInt8] = [0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0x41, count: 30)
        let tail = stub + endRecord(comment: fake)
        XCTAssertEqual(ArchiveFormat.sniffTail(tail), .zip, "the real record, behind the look-alike in its comment")
        XCTAssertEqual(ArchiveFormat.zipEndSignature(in: tail, below: tail.count - 21), 122, "the last signature: the comment's")
        XCTAssertEqual(ArchiveFormat.zipEndSignature(in: tail, below: 122), 100)
        XCTAssertNil(ArchiveFormat.sniffTail(stub + endRecord(comment: []) + [0]), "the comment length must reach the end")
        XCTAssertNil(ArchiveFormat.sniffTail(Array(endRecord(comment: []).prefix(21))))
    }

    func testTextIsNoArchive() {
        XCTAssertNil(ArchiveFormat.sniff(Array("This is not a comic, just text.\n".utf8)))
        XCTAssertNil(ArchiveFormat.sniff([UInt8]()))
        XCTAssertNil(ArchiveFormat.sniff([UInt8](repeating: 0, count: 512)))
    }

    func testPrePosixTarIsRecognisedByItsChecksum() {
        var header = [UInt8](repeating: 0, count: 512)
        let name = Array("page.jpg".utf8)
        header.replaceSubrange(0..<name.count, with: name)
        let mode = Array("0000644\0".utf8)
        header.replaceSubrange(100..<108, with: mode)
        var sum = header.enumerated().reduce(0) { $0 + ((148..<156).contains($1.offset) ? 0x20 : Int($1.element)) }
        let checksum = Array((String(sum, radix: 8).leftPadded(6) + "\0 ").utf8)
        header.replaceSubrange(148..<156, with: checksum)
        XCTAssertEqual(ArchiveFormat.sniff(header), .tar)
        header[0] ^= 0x01
        sum = 0
        XCTAssertNil(ArchiveFormat.sniff(header), "a wrong checksum is not a tar")
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

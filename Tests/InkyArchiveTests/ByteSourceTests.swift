import Foundation
import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// Comics read from bytes that are not a file (what a vault object decrypted on demand is)
/// must list and read exactly as from the file.
final class ByteSourceTests: XCTestCase {
    /// Bytes in memory, counting reads, handing out small pieces to exercise the cursors.
    final class MemoryBytes: RandomAccessBytes {
        let data: [UInt8]
        private(set) var reads = 0
        init(_ data: [UInt8]) { self.data = data }
        var size: Int64 { Int64(data.count) }
        func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
            reads += 1
            guard offset < size else { return 0 }
            let piece = min(count, 10_000, data.count - Int(offset))
            data.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: piece) }
            return piece
        }
    }

    func testEveryFormatReadsTheSameFromBytesAsFromItsFile() throws {
        for file in [Corpus.fixture("Space Patrol/Space Patrol 002.cbz"), Corpus.fixture("Moon Tales/Moon Tales 01.cb7"),
                     Corpus.fixture("Moon Tales/Moon Tales 02.cbt"), Corpus.fixture("Real/Captain Science 001.cbr"),
                     Corpus.fixture("Broken/Really A Zip.cbr")] {
            let fromFile = try ComicOpener.open(file)
            let bytes = MemoryBytes(try readFile(file))
            let fromBytes = try ComicOpener.open(bytes: bytes, label: "vault comic", limits: .default)
            // Stored pages' ranges too: offsets into the archive's bytes, wherever they come from
            // (the daemon decrypts a vault object's range as it preads a file's).
            XCTAssertEqual(fromBytes.listing, fromFile.listing, file)
            for page in fromFile.listing.pages.reversed() {
                XCTAssertEqual(try fromBytes.readPage(page), try fromFile.readPage(page), "\(file) \(page.name)")
            }
            XCTAssertGreaterThan(bytes.reads, 0)
        }
    }

    func testRAR4FromBytesListsLikeFromItsFile() throws {
        let file = Corpus.path("rarfile-tests/rar3-subdirs.rar")
        try Corpus.skipUnlessPresent("rarfile-tests/rar3-subdirs.rar")
        let fromFile = try UnarrComicReader(path: file, limits: .default)
        let fromBytes = try ComicOpener.open(bytes: MemoryBytes(try readFile(file)), label: "vault comic", limits: .default)
        XCTAssertEqual(fromBytes.listing.skipped.map(\.path), fromFile.listing.skipped.map(\.path))
        XCTAssertEqual(fromBytes.listing.format, .rar4)
    }

    func testBrokenBytesGiveTypedErrorsNamedByTheLabel() throws {
        XCTAssertThrowsError(try ComicOpener.open(bytes: MemoryBytes(Array("plain text".utf8)), label: "Secret.cbz", limits: .default)) { error in
            XCTAssertEqual(error as? ComicError, .notAComicArchive(path: "Secret.cbz"))
        }
    }
}

import Foundation
import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// A ZIP read from bytes that are not a file (a vault object) is listed from its central
/// directory alone; it must list and read exactly as libarchive's walk of its file does.
final class ZipDirectoryListingTests: XCTestCase {
    /// Every ZIP of the shared corpus (libarchive's own test archives among them: ZIP64, data
    /// descriptors, odd makers, damage): the same listing or the same error, the same bytes or
    /// the same error for every page, from the bytes as from the file.
    func testEveryCorpusZipListsAndReadsFromItsDirectoryAsFromLibarchivesWalk() throws {
        try Corpus.skipUnlessPresent()
        let files = try corpusZips()
        XCTAssertGreaterThan(files.count, 40)
        var fromDirectory = 0
        for file in files {
            let fromFile = Result { () throws(ComicError) in try ComicOpener.open(file) }
            let bytes = ByteSourceTests.MemoryBytes(try readFile(file))
            let fromBytes = Result { () throws(ComicError) in try ComicOpener.open(bytes: bytes, label: file, limits: .default) }
            switch (fromFile, fromBytes) {
            case (.failure(let fileError), .failure(let bytesError)):
                XCTAssertEqual(bytesError, fileError, file)
            case (.success(let fileReader), .success(let bytesReader)):
                XCTAssertEqual(bytesReader.listing, fileReader.listing, file)
                for page in fileReader.listing.pages {
                    let expected = Result { () throws(ComicError) in try fileReader.readPage(page) }
                    let got = Result { () throws(ComicError) in try bytesReader.readPage(page) }
                    XCTAssertEqual(got.map { CRC32.checksum($0) }, expected.map { CRC32.checksum($0) }, "\(file) \(page.sourcePath)")
                }
                if (bytesReader as? LibArchiveComicReader)?.isListedFromDirectory == true { fromDirectory += 1 }
            default:
                XCTFail("\(file): from its file \(fromFile), from its bytes \(fromBytes)")
            }
        }
        XCTAssertGreaterThan(fromDirectory, files.count / 2, "most corpus ZIPs have a whole central directory")
    }

    private func corpusZips() throws -> [String] {
        let root = Corpus.root.path
        let names = try FileManager.default.subpathsOfDirectory(atPath: root)
        return names.filter { [".zip", ".cbz"].contains(where: $0.lowercased().hasSuffix) }.sorted().map { "\(root)/\($0)" }
    }

    private func readFile(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
}

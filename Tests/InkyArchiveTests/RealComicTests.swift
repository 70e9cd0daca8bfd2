import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// Real comics written by other projects: every page must equal the entry byte for byte
/// (sha256 recorded in the corpus manifest) and come in the recorded order.
final class RealComicTests: XCTestCase {
    func testEveryReadableComicInTheCorpusServesExactPagesInOrder() throws {
        let comics = Corpus.manifest.filter { $0.expected.status == "ok" }
        try XCTSkipIf(comics.isEmpty, "../shared/corpus is missing")
        XCTAssertGreaterThanOrEqual(comics.count, 12)
        for comic in comics {
            let reader = try ComicOpener.open(Corpus.path(comic.path))
            XCTAssertEqual(reader.listing.pages.map(\.sourcePath), comic.expected.pages.map(\.entry), comic.path)
            for (page, expected) in zip(reader.listing.pages, comic.expected.pages) {
                let bytes = try reader.readPage(page)
                XCTAssertEqual(Int64(bytes.count), page.size)
                XCTAssertEqual(Digest.sha256Hex(bytes), expected.sha256, "\(comic.path): \(page.sourcePath)")
            }
        }
    }

    func testPagesReadOutOfOrderAreStillExact() throws {
        let comic = Corpus.path("real-comics/comicbox/Captain Science #001.cb7")
        try Corpus.skipUnlessPresent("real-comics/comicbox/Captain Science #001.cb7")
        let reader = try ComicOpener.open(comic)
        let forward = try reader.listing.pages.map { try reader.readPage($0) }
        for page in reader.listing.pages.reversed() {
            XCTAssertEqual(try reader.readPage(page), forward[page.number])
        }
    }
}

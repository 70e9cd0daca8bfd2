import Foundation
import InkyCore
import XCTest
@testable import InkyStore

final class ComicMetadataIndexTests: XCTestCase {
    private var folder: URL!

    override func setUp() {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("metadata-\(UUID().uuidString)")
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func open() -> StateDatabase { StateDatabase.open(at: folder.appendingPathComponent("state.sqlite").path) }

    private func listing(_ metadata: ComicMetadata?) -> ComicListing {
        var listing = ComicListing(format: .zip, pages: [Page(number: 0, name: "1.jpg", sourcePath: "1.jpg", entryIndex: 0, size: 10)],
                                   comicInfo: nil, skipped: [], isSolid: false)
        listing.metadata = metadata
        return listing
    }

    private let tagged = ComicMetadata(source: .comicInfo, series: "Batman", number: "12", volume: 2011, title: "Owls",
                                       publisher: "DC", year: 2012, month: 10,
                                       arcs: [.init(name: "Night of the Owls", number: "3"), .init(name: "Court", number: nil)],
                                       pageCount: 24, language: "en", manga: "No")

    func testMetadataIsStoredWithItsListingAndReadBackWithItsArcs() throws {
        let state = open()
        let file = LibraryFile(path: "/lib/Batman 012.cbz"), identity = FileIdentity(size: 5, modifiedNanoseconds: 70, inode: 9)
        let before = state.metadataGeneration
        state.storeListing(file, identity: identity, .success(listing(tagged)))
        XCTAssertNotEqual(state.metadataGeneration, before)
        let stored = try XCTUnwrap(state.indexedMetadata(file))
        XCTAssertEqual(stored.metadata, tagged)
        XCTAssertEqual(stored.modifiedNanoseconds, 70)
        XCTAssertNil(state.indexedListing(file, identity: identity).flatMap { try? $0.get() }?.metadata,
                     "the listing's bytes do not repeat what the table holds")

        // Re-tagged: same row id (the views' inode numbers), new fields, arcs replaced.
        var retagged = tagged
        retagged.series = "Batman Eternal"
        retagged.arcs = [.init(name: "Eternal", number: "1")]
        state.storeListing(file, identity: FileIdentity(size: 6, modifiedNanoseconds: 80, inode: 9), .success(listing(retagged)))
        let again = try XCTUnwrap(state.indexedMetadata(file))
        XCTAssertEqual(again.id, stored.id)
        XCTAssertEqual(again.metadata, retagged)

        // A listing read back from the index carries none: the row stays.
        state.storeListing(file, identity: identity, .success(listing(nil)))
        XCTAssertEqual(state.indexedMetadata(file)?.metadata, retagged)
        XCTAssertEqual(state.allIndexedMetadata().count, 1)

        var empty = listing(tagged)
        empty.pages = []
        state.storeListing(file, identity: identity, .success(empty))
        XCTAssertNil(state.indexedMetadata(file), "a comic without pages is in no view")
        state.storeListing(file, identity: identity, .success(listing(tagged)))
        state.storeListing(file, identity: identity, .failure(.encrypted(path: file.path)))
        XCTAssertNil(state.indexedMetadata(file), "a comic that does not open is in no view")
    }

    func testRemovedAndPurgedComicsLeaveNoMetadata() throws {
        let state = open()
        let identity = FileIdentity(size: 5, modifiedNanoseconds: 70, inode: 9)
        for name in ["a", "b", "c"] {
            state.storeListing(LibraryFile(path: "/lib/\(name).cbz"), identity: identity, .success(listing(tagged)))
        }
        state.removeFromIndex(LibraryFile(path: "/lib/a.cbz"))
        _ = try state.purge(paths: ["/lib/b.cbz"])
        XCTAssertEqual(state.allIndexedMetadata().map(\.file.path), ["/lib/c.cbz"])
        let arcs = try state.withDatabase { database throws(SQLiteError) in
            let query = try database.prepare("SELECT count(*) FROM comic_arcs")
            _ = try query.step()
            return query.int64(at: 0)
        }
        XCTAssertEqual(arcs, 2, "only c's arcs are left")
    }
}

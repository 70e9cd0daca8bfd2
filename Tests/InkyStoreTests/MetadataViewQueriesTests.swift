import Foundation
import InkyCore
import XCTest
@testable import InkyStore

/// The views' on-demand questions to the index: grouped folders, one folder's comics, the
/// newest comics, each kept to the mounted library's folder.
final class MetadataViewQueriesTests: XCTestCase {
    private var folder: URL!

    override func setUp() {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("view-queries-\(UUID().uuidString)")
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func store(_ state: StateDatabase, _ path: String, mtime: Int64, series: String?, volume: Int? = nil,
                       publisher: String? = nil, arcs: [String] = []) {
        var listing = ComicListing(format: .zip, pages: [Page(number: 0, name: "1.jpg", sourcePath: "1.jpg", entryIndex: 0, size: 10)],
                                   comicInfo: nil, skipped: [], isSolid: false)
        listing.metadata = ComicMetadata(source: .comicInfo, series: series, volume: volume, publisher: publisher,
                                         arcs: arcs.map { ComicMetadata.Arc(name: $0) })
        state.storeListing(LibraryFile(path: path), identity: FileIdentity(size: 5, modifiedNanoseconds: mtime, inode: 1), .success(listing))
    }

    func testEachQueryAnswersForTheLibraryFolderOnly() throws {
        let state = StateDatabase.open(at: folder.appendingPathComponent("state.sqlite").path)
        XCTAssertEqual(state.schemaVersion, 11)
        store(state, "/lib/a.cbz", mtime: 10, series: "Batman", volume: 2011, publisher: "DC", arcs: ["Owls"])
        store(state, "/lib/b.cbz", mtime: 30, series: "Batman", volume: 2011, publisher: "DC")
        store(state, "/lib/c.cbz", mtime: 30, series: "Batman", publisher: "DC", arcs: ["Owls", "Court"])
        store(state, "/lib/d.cbz", mtime: 20, series: nil)
        // Beside the library, and a folder whose name only starts like it: never shown.
        store(state, "/library2/e.cbz", mtime: 99, series: "Saga", publisher: "Image", arcs: ["War"])
        store(state, "/other/f.cbz", mtime: 98, series: "Batman", volume: 2011, publisher: "DC", arcs: ["Owls"])

        let groups = state.metadataSeriesGroups(under: "/lib").map { "\($0.series) \($0.volume.map(String.init) ?? "-")" }
        XCTAssertEqual(groups.sorted(), ["Batman -", "Batman 2011"])
        let publishers = state.metadataSeriesGroups(under: "/lib", withPublisher: true).map { "\($0.publisher ?? "?") \($0.series)" }
        XCTAssertEqual(publishers, ["DC Batman", "DC Batman"])
        XCTAssertEqual(state.metadataArcNames(under: "/lib").map(\.arc).sorted(), ["Court", "Owls"])

        let batman2011 = state.indexedMetadata(series: [("Batman", 2011)], under: "/lib")
        XCTAssertEqual(batman2011.map(\.file.path), ["/lib/a.cbz", "/lib/b.cbz"])
        XCTAssertEqual(batman2011.first?.metadata.arcs.map(\.name), ["Owls"])
        XCTAssertEqual(state.indexedMetadata(series: [("Batman", nil)], under: "/lib").map(\.file.path), ["/lib/c.cbz"])
        XCTAssertEqual(state.indexedMetadata(arcs: ["Owls"], under: "/lib").map(\.file.path), ["/lib/a.cbz", "/lib/c.cbz"])
        XCTAssertEqual(state.indexedMetadata(arcs: ["Court"], under: "/lib").first?.metadata.arcs.map(\.name), ["Owls", "Court"])

        let id = try XCTUnwrap(batman2011.first?.id)
        XCTAssertEqual(state.indexedMetadata(id: id, under: "/lib")?.file.path, "/lib/a.cbz")
        XCTAssertNil(state.indexedMetadata(id: id, under: "/other"))

        // The newest, ties taken in natural order of their paths, never more than asked for.
        XCTAssertEqual(state.newestMetadata(1, under: "/lib").map(\.file.path), ["/lib/b.cbz"])
        XCTAssertEqual(state.newestMetadata(2, under: "/lib").map(\.file.path).sorted(), ["/lib/b.cbz", "/lib/c.cbz"])
        XCTAssertEqual(state.newestMetadata(3, under: "/lib").map(\.file.path).sorted(), ["/lib/b.cbz", "/lib/c.cbz", "/lib/d.cbz"])
        XCTAssertEqual(state.newestMetadata(100, under: "/lib").count, 4)
        XCTAssertEqual(state.newestMetadata(100, under: "/nowhere").count, 0)
    }

    /// A library copied at one mtime: every comic is a tie, and the first in natural order come.
    func testTiesForTheNewestAreTakenInNaturalOrder() {
        let state = StateDatabase.open(at: folder.appendingPathComponent("ties.sqlite").path)
        for issue in [10, 9, 100, 2, 1] { store(state, "/lib/Issue \(issue).cbz", mtime: 50, series: "S") }
        store(state, "/lib/Newer.cbz", mtime: 60, series: "S")
        XCTAssertEqual(Set(state.newestMetadata(3, under: "/lib").map(\.file.path)), ["/lib/Newer.cbz", "/lib/Issue 1.cbz", "/lib/Issue 2.cbz"])
        XCTAssertEqual(Set(state.newestMetadata(4, under: "/lib").map(\.file.path)),
                       ["/lib/Newer.cbz", "/lib/Issue 1.cbz", "/lib/Issue 2.cbz", "/lib/Issue 9.cbz"])
    }

    /// A view forgets a folder it no longer holds only when its digest moved: a comic rewritten,
    /// added or gone moves its own groups' digests and no other.
    func testAGroupsDigestMovesWithItsComicsOnly() throws {
        let state = StateDatabase.open(at: folder.appendingPathComponent("digest.sqlite").path)
        store(state, "/lib/a.cbz", mtime: 10, series: "Batman", volume: 2011, publisher: "DC", arcs: ["Owls"])
        store(state, "/lib/b.cbz", mtime: 30, series: "Batman", volume: 2011, publisher: "DC")
        store(state, "/lib/c.cbz", mtime: 30, series: "Saga", publisher: "Image", arcs: ["War"])
        func digests() -> [String: Int64] {
            var all: [String: Int64] = [:]
            for group in state.metadataSeriesGroups(under: "/lib") { all["series " + group.series] = group.digest }
            for arc in state.metadataArcNames(under: "/lib") { all["arc " + arc.arc] = arc.digest }
            return all
        }
        let before = digests()
        XCTAssertEqual(before.keys.sorted(), ["arc Owls", "arc War", "series Batman", "series Saga"])
        XCTAssertEqual(digests(), before, "the same rows give the same digests")

        store(state, "/lib/b.cbz", mtime: 31, series: "Batman", volume: 2011, publisher: "DC")
        let rewritten = digests()
        XCTAssertNotEqual(rewritten["series Batman"], before["series Batman"])
        XCTAssertEqual(rewritten["series Saga"], before["series Saga"])
        XCTAssertEqual(rewritten["arc Owls"], before["arc Owls"], "b.cbz is in no arc")

        store(state, "/lib/d.cbz", mtime: 30, series: "Saga", publisher: "Image", arcs: ["Owls"])
        let added = digests()
        XCTAssertNotEqual(added["series Saga"], rewritten["series Saga"])
        XCTAssertNotEqual(added["arc Owls"], rewritten["arc Owls"])
        XCTAssertEqual(added["arc War"], rewritten["arc War"])
        XCTAssertEqual(added["series Batman"], rewritten["series Batman"])
    }
}

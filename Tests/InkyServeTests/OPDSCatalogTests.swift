import Foundation
import InkyTestSupport
import XCTest

/// One `inkyfs serve` of a copy of Fixtures/Library for the class, read by real clients: curl
/// fetches, XMLParser and jing read the feeds, unzip and 7zz test the downloads, and the pages
/// are compared with what the library core gives for them.
final class OPDSCatalogTests: XCTestCase {
    nonisolated(unsafe) static var served: ServedLibrary?
    /// Why the class's server did not start: each test fails with it (never a silent skip).
    nonisolated(unsafe) static var failure: (any Error)?
    var server: ServedLibrary { Self.served! }

    override class func setUp() {
        super.setUp()
        let library = ArchiveMaker.temporaryDirectory("serve-library").appendingPathComponent("Library")
        do {
            _ = try ArchiveMaker.run("/bin/cp", ["-R", Corpus.fixtures.path, library.path])
            // A reading list whose order is not the library's.
            try """
                <ReadingList><Name>Best Of</Name><Books><Book Series="Moon Tales" Number="2"/><Book Series="Space Patrol" Number="1"/>
                <Book Series="Moon Tales" Number="1"/><Book Series="Nowhere" Number="9"/></Books></ReadingList>
                """.write(to: library.appendingPathComponent("Best Of.cbl"), atomically: true, encoding: .utf8)
            served = try ServedLibrary(library: library)
        } catch {
            failure = error
        }
    }

    override class func tearDown() {
        if let served { XCTAssertEqual(served.stop(), 0, "SIGTERM stops the server cleanly:\n\(served.logText)") }
        served = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        if let failure = Self.failure { throw failure }
    }

    func testEveryFeedIsValidOPDSAndTheCatalogMirrorsTheMount() throws {
        let feeds = try server.crawl()
        let root = try XCTUnwrap(feeds["/opds"])
        XCTAssertEqual(root.entries.map(\.title), ["Folders", "Continue Reading", "By Series", "By Publisher", "Story Arcs",
                                                    "Reading Lists", "Recently Added"])
        let folders = try XCTUnwrap(feeds["/opds/folders"])
        XCTAssertEqual(folders.entries.map(\.title), ["Broken", "Loose Sketches", "Moon Tales", "Real", "Space Patrol"])
        let moon = try XCTUnwrap(feeds["/opds/folders?path=Moon%20Tales"])
        XCTAssertEqual(moon.entries.map(\.title), ["Moon Tales #1", "Moon Tales #2"])
        let series = try XCTUnwrap(feeds["/opds/view?kind=series"])
        XCTAssertTrue(series.entries.map(\.title).contains("Space Patrol"), "\(series.entries.map(\.title))")
        // A comic that cannot be read is an entry saying why, with nothing to download.
        let broken = try XCTUnwrap(feeds["/opds/folders?path=Broken"])
        let truncated = try XCTUnwrap(broken.entries.first { $0.title == "Truncated Issue" })
        XCTAssertTrue(truncated.content.contains("cannot show this comic"), truncated.content)
        XCTAssertNil(truncated.link("http://opds-spec.org/acquisition"))
        // A reading list in its own order; Recently Added holds every readable comic.
        let list = try XCTUnwrap(feeds["/opds/view?kind=lists&folder=Best%20Of"])
        XCTAssertEqual(list.entries.map(\.title), ["Moon Tales #2", "Space Patrol #1: First Contact", "Moon Tales #1"])
        XCTAssertEqual(try XCTUnwrap(feeds["/opds/view?kind=recent"]).entries.count, 8, "the comics that read")
        XCTAssertGreaterThanOrEqual(feeds.count, 15, "\(feeds.keys.sorted())")
    }

    /// The OpenSearch description names the search, and the search finds by series, title and path.
    func testSearchFindsComicsByWhatTheyAre() throws {
        let description = try server.get("/opds/search.xml")
        XCTAssertEqual(description.headers["content-type"], "application/opensearchdescription+xml; charset=utf-8")
        XCTAssertTrue(description.text.contains("template=\"/opds/search?q={searchTerms}\""), description.text)
        let found = try XCTUnwrap(FeedReader(try server.get("/opds/search?q=moon+tales").body))
        XCTAssertEqual(found.entries.map(\.title).sorted(), ["Moon Tales #1", "Moon Tales #2"])
        XCTAssertEqual(try XCTUnwrap(FeedReader(try server.get("/opds/search?q=patrol%20002").body)).entries.map(\.title), ["Space Patrol #2"])
        XCTAssertEqual(try XCTUnwrap(FeedReader(try server.get("/opds/search?q=%25").body)).entries.count, 0, "% is a character, not a wildcard")
    }

    /// Each readable comic downloads as a whole CBZ holding the library core's pages.
    func testEveryComicDownloadsAsACBZWithTheLibraryCoresPages() throws {
        let downloaded = try server.checkEveryDownload(try server.crawl())
        // 7z, tar, two ZIPs, two readable RAR4s, a ZIP named .cbr, a folder of images.
        XCTAssertEqual(downloaded, ["Broken/Really A Zip.cbr", "Loose Sketches", "Moon Tales/Moon Tales 01.cb7", "Moon Tales/Moon Tales 02.cbt",
                                    "Real/Captain Science 001.cbr", "Real/Fake Order.cbr", "Space Patrol/Space Patrol 001.cbz",
                                    "Space Patrol/Space Patrol 002.cbz"])
    }
}

/// The corpus's real comics (comicbox's, comictagger's, patool's: ZIP, RAR4, RAR5, 7z, TAR, PDF,
/// damaged and encrypted ones), served from the shared folder as it is (read only).
final class RealComicsServeTests: XCTestCase {
    func testEveryRealComicDownloadsWithTheLibraryCoresPagesAndTheBrokenOnesSayWhy() throws {
        try Corpus.skipUnlessPresent("real-comics")
        let server = try ServedLibrary(library: Corpus.root.appendingPathComponent("real-comics"))
        defer { XCTAssertEqual(server.stop(), 0, server.logText) }
        let feeds = try server.crawl()
        let downloaded = try server.checkEveryDownload(feeds)
        XCTAssertTrue(downloaded.contains("comicbox/test_pdf.pdf") && downloaded.contains("comicbox/Captain Science #001.cb7"), "\(downloaded)")
        let unreadable = feeds.filter { $0.key.hasPrefix("/opds/folders") }.values.flatMap(\.entries)
            .filter { $0.link("http://opds-spec.org/acquisition") == nil && $0.link("subsection") == nil }
        XCTAssertFalse(unreadable.isEmpty)
        for entry in unreadable { XCTAssertTrue(entry.content.hasPrefix("inkyfs cannot show this comic"), "\(entry.title): \(entry.content)") }
        // As `inkyfs scan` finds them: 12 readable, 10 not (encrypted, ACE, no images), every one an entry.
        XCTAssertEqual(downloaded.count, 12, "\(downloaded)")
        XCTAssertEqual(unreadable.count, 10, "\(unreadable.map(\.title))")
    }
}

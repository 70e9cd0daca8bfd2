import Foundation
import InkyTestSupport
import XCTest
@testable import InkyCore

/// An index written before pieces were typed (listing version 4, each piece packed into its
/// page's entry index) still serves a device profile's mount: the listing comes from the index
/// with no worker, and every piece reads back as the mount that made the index served it.
final class MountDeviceProfileIndexTests: XCTestCase {
    private var library: URL!
    private var state: URL!
    private var database: String { state.appendingPathComponent("state.sqlite").path }

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("pieces-lib")
        state = ArchiveMaker.temporaryDirectory("pieces-state")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: state)
    }

    func testAVersionFourIndexServesTheSamePiecesWithoutListingAgain() throws {
        // A portrait page, a spread read right to left, a 5200-row strip (four screen-high strips).
        try ArchiveMaker.zip(at: library.appendingPathComponent("Book.cbz"),
                             members: [("p1.jpg", try PageImages.make(.jpeg, width: 900, height: 1_350)),
                                       ("p2.jpg", try ProfileImages.spread(width: 3_000, height: 2_000)),
                                       ("p3.jpg", try ProfileImages.strip(width: 800, panels: 4, panelHeight: 1_200, gutter: 100))],
                             compression: "deflated")
        let arguments = ["--state", state.path, "--fit", "1264x1680", "--split-spreads", "--strips", "--rtl"]
        let names = ["001.jpg", "002-1.jpg", "002-2.jpg", "003-1.jpg", "003-2.jpg", "003-3.jpg", "003-4.jpg"]
        var mount = try MountedLibrary(library: library, arguments: arguments)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Book")).sorted(), names)
        let pages = try names.map { try readFile(mount.path("Book/\($0)")) }
        XCTAssertEqual(mount.unmount(), 0)

        let stored = try IndexedListings.read(database)
        XCTAssertEqual(stored.first, ListingCodec.version)
        let listing = try XCTUnwrap(ListingCodec.decode(stored))
        XCTAssertEqual(listing.pages.map(\.piece?.count), [nil, 2, 2, 4, 4, 4, 4])
        XCTAssertEqual(listing.pages.map(\.piece?.rightToLeft), [nil, true, true, false, false, false, false])
        let versionFour = ListingCodec.encode(listing, version: 4)
        try IndexedListings.write(versionFour, to: database)
        XCTAssertEqual(try IndexedListings.read(database), versionFour)

        // Any request to a worker about the comic now kills it: names and sizes come from the index.
        mount = try MountedLibrary(library: library, arguments: arguments, environment: ["INKYFS_TEST_WORKER_FAULT": "crash:Book"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Book")).sorted(), names)
        for (name, bytes) in zip(names, pages) { XCTAssertEqual(statSize(mount.path("Book/\(name)")), Int64(bytes.count), name) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Book/ERROR.txt")))
        XCTAssertEqual(mount.unmount(), 0)

        // Read from the same version 4 row, each piece is asked of a worker and comes back the same.
        try IndexedListings.write(versionFour, to: database)
        mount = try MountedLibrary(library: library, arguments: arguments)
        for (name, bytes) in zip(names, pages) { XCTAssertEqual(try readFile(mount.path("Book/\(name)")), bytes, name) }
        XCTAssertEqual(mount.unmount(), 0)
    }
}

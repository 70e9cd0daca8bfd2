import Foundation
import InkyCore
import InkyLibrary
import InkyTestSupport
import InkyTree
import InkyWorker
import Synchronization
import XCTest
@testable import InkyMount

/// The library core numbered as a mount numbers it, without FUSE: a node has one number
/// whichever request gave it (a lookup, a listing, `..`), and a number that leads nowhere
/// answers as the kernel must hear it: EIO for a file of a locked vault, ENOENT otherwise.
final class NumberedLibraryTests: XCTestCase {
    /// Every comic two pages of two bytes, each page's bytes its number: no archive is parsed.
    struct TwoPages: ComicBackend {
        func list(_ source: ComicSource, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity) {
            let path = source.path
            let identity = try FileIdentity.of(path).mapError { ComicError.io(path: path, errno: $0.code, detail: "\($0)") }.get()
            let pages = (0..<2).map { Page(number: $0, name: "\($0 + 1).jpg", sourcePath: "\($0 + 1).jpg", entryIndex: $0, size: 2) }
            return (ComicListing(format: .zip, pages: pages, comicInfo: nil, skipped: [], isSolid: false), identity)
        }

        func read(_ source: ComicSource, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits,
                  deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) {
            for entry in entries { deliver(entry.source, .success(Array(repeating: UInt8(entry.source.entry + 1), count: 2))) }
        }

        func comicInfo(_ source: ComicSource, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]? { nil }
    }

    private var library: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("numbered")
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Series"), withIntermediateDirectories: true)
        try Data("not parsed".utf8).write(to: library.appendingPathComponent("Series/One.cbz"))
    }

    override func tearDown() { try? FileManager.default.removeItem(at: library) }

    private func mounted() -> NumberedLibrary {
        NumberedLibrary(LibraryFilesystem(library: library.path, options: MountOptions(), backend: TwoPages()))
    }

    func testALookupAListingAndDotDotGiveANodeOneNumber() throws {
        let mount = mounted()
        let series = try mount.lookup(parent: NumberedLibrary.rootID, name: "Series").get()
        XCTAssertEqual(try mount.directoryEntries(of: NumberedLibrary.rootID).get().first { $0.name == "Series" }?.id, series.id)
        XCTAssertEqual(try mount.attributes(of: series.id).get().id, series.id)
        let comic = try mount.lookup(parent: series.id, name: "One").get()
        XCTAssertEqual(comic.kind, .directory)
        XCTAssertEqual(try mount.directoryEntries(of: series.id).get().first { $0.name == "One" }?.id, comic.id)
        XCTAssertEqual(mount.parent(of: comic.id), series.id)
        XCTAssertEqual(mount.parent(of: series.id), NumberedLibrary.rootID)

        let pages = try mount.directoryEntries(of: comic.id).get()
        XCTAssertEqual(pages.count, 2)
        for page in pages {
            XCTAssertEqual(page.attributes?.id, page.id, "listed attributes carry the entry's number")
            XCTAssertEqual(try mount.lookup(parent: comic.id, name: page.name).get().id, page.id)
            XCTAssertEqual(try mount.attributes(of: page.id).get().id, page.id)
        }
        XCTAssertEqual(Set(([series, comic].map(\.id) + pages.map(\.id))).count, 4, "every node its own number")

        let read = Mutex<Result<[UInt8], Errno>?>(nil)
        let done = DispatchSemaphore(value: 0)
        mount.read(pages[0].id, offset: 0, size: 100, descriptor: nil, caller: .thisProcess) { result in
            read.withLock { $0 = result.map(Array.init) }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(read.withLock { $0 }, .success([1, 1]))
        XCTAssertEqual(mount.readLink(pages[0].id), .failure(.EINVAL))
    }

    func testANumberThatLeadsNowhereIsEIOForAVaultFileAndENOENTOtherwise() {
        let mount = mounted()
        mount.numberVault(in: ViewSlot(2))
        let page = mount.nodes.id(for: .page(comic: .vault("0a1b"), generation: 1, index: 0))
        let folder = mount.nodes.id(for: .vaultFolder("Shelf"))
        _ = mount.nodes.dropVault()
        XCTAssertEqual(mount.attributes(of: page).map(\.id), .failure(.EIO), "a page held open across lock")
        XCTAssertEqual(mount.open(page, caller: .thisProcess), .failure(.EIO))
        XCTAssertEqual(mount.attributes(of: folder).map(\.id), .failure(.ENOENT))
        XCTAssertEqual(mount.lookup(parent: folder, name: "x").map(\.id), .failure(.ENOENT))
        XCTAssertEqual(mount.directoryEntries(of: folder).map(\.count), .failure(.ENOENT))
        XCTAssertEqual(mount.parent(of: folder), NumberedLibrary.rootID)
    }
}

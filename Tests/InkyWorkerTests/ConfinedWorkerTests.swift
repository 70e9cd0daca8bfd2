import Foundation
import InkyArchive
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyWorker

/// A pool that serves a mounted library opens comics beneath it only, never through a link,
/// in the workers and in its own stored-page reader: what the daemon checked is what is read.
final class ConfinedWorkerTests: XCTestCase {
    private var folder: URL!
    private var library: URL { folder.appendingPathComponent("lib") }

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("confined")
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Series"), withIntermediateDirectories: true)
        for path in ["lib/Series/One.cbz", "outside.cbz"] {
            try FileManager.default.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"),
                                             toPath: folder.appendingPathComponent(path).path)
        }
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func pool() -> WorkerPool {
        var configuration = WorkerPool.Configuration(executable: CommandRunner.workerBinary.path, maxWorkers: 1, timeout: 10)
        configuration.libraryRoot = library.path
        return WorkerPool(configuration)
    }

    private func errno(of call: () throws -> Void) -> Int32? {
        do {
            try call()
            return nil
        } catch let error as ComicError {
            if case .io(_, let code, _) = error { return code }
            XCTFail("not an I/O refusal: \(error)")
            return nil
        } catch {
            XCTFail("\(error)")
            return nil
        }
    }

    func testWorkersOpenNothingThroughALinkNorOutsideTheLibrary() throws {
        let workers = pool()
        defer { workers.shutdown() }
        XCTAssertEqual(try workers.list(library.path + "/Series/One.cbz", limits: .default).0.pages.count, 12)
        try FileManager.default.createSymbolicLink(atPath: library.path + "/Link.cbz", withDestinationPath: folder.path + "/outside.cbz")
        try FileManager.default.createSymbolicLink(atPath: library.path + "/Via", withDestinationPath: "Series")
        XCTAssertEqual(errno { _ = try workers.list(library.path + "/Link.cbz", limits: .default) }, ELOOP, "a link to a comic is not followed")
        XCTAssertEqual(errno { _ = try workers.list(library.path + "/Via/One.cbz", limits: .default) }, ELOOP, "nor a link on the way")
        XCTAssertEqual(errno { _ = try workers.list(folder.path + "/outside.cbz", limits: .default) }, EACCES, "nor anything outside")
        XCTAssertEqual(errno { _ = try workers.list(library.path + "/Series/../../outside.cbz", limits: .default) }, EACCES)
    }

    func testAComicSwappedForALinkAfterListingIsNeverRead() throws {
        let workers = pool()
        defer { workers.shutdown() }
        let comic = library.path + "/Series/One.cbz"
        let (listing, identity) = try workers.list(comic, limits: .default)
        // The outside file is the same comic, byte for byte: only where it lies tells them apart.
        try FileManager.default.removeItem(atPath: comic)
        try FileManager.default.createSymbolicLink(atPath: comic, withDestinationPath: folder.path + "/outside.cbz")
        let stored = listing.pages.map(EntryRequest.init)
        let decoded = stored.map { EntryRequest(source: $0.source, size: $0.size, name: $0.name) }
        for requests in [stored, decoded] {
            var delivered = 0
            var codes: [Int32?] = []
            // Stored pages fail one by one (read in the pool), decoded ones as a request (in a worker).
            codes.append(errno {
                try workers.read(comic, identity: identity, entries: requests, limits: .default) { _, result in
                    switch result {
                    case .success: delivered += 1
                    case .failure(let error): codes.append(self.errno { throw error })
                    }
                }
            })
            XCTAssertEqual(delivered, 0, "no page of the link's target")
            let refusals = codes.compactMap { $0 }
            XCTAssertFalse(refusals.isEmpty)
            XCTAssertTrue(refusals.allSatisfy { $0 == ELOOP || $0 == ESTALE }, "refused: \(refusals)")
        }
    }

    /// Workers keep a folder open for a second, as the daemon does: a folder swapped for a link
    /// meanwhile answers as the folder that was there, or is refused once reached afresh; the
    /// link's target, another comic of the same name, is never listed.
    func testAFolderSwappedForALinkIsNeverEnteredThroughIt() throws {
        let elsewhere = folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 002.cbz"),
                                         toPath: elsewhere.appendingPathComponent("One.cbz").path)
        let workers = pool()
        defer { workers.shutdown() }
        let comic = library.path + "/Series/One.cbz"
        let listed = try workers.list(comic, limits: .default).0.pages.count
        let target = try ComicOpener.open(elsewhere.appendingPathComponent("One.cbz").path).listing.pages.count
        XCTAssertNotEqual(listed, target, "the two comics tell apart by their pages")
        XCTAssertEqual(rename(library.path + "/Series", library.path + "/Series.old"), 0)
        try FileManager.default.createSymbolicLink(atPath: library.path + "/Series", withDestinationPath: elsewhere.path)
        let deadline = Date().addingTimeInterval(5)
        var refused = false
        while !refused && Date() < deadline {
            do {
                let pages = try workers.list(comic, limits: .default).0.pages.count
                XCTAssertEqual(pages, listed, "only the folder that was there")
                usleep(50_000)
            } catch {
                XCTAssertEqual(errno { throw error }, ELOOP)
                refused = true
            }
        }
        XCTAssertTrue(refused, "a folder kept open is let go within its lifetime, and the link then refused")
    }
}

import Foundation
import InkyCore
import InkyStore
import XCTest
@testable import InkyLibrary

/// The mount's index writes are batched off the listing threads, yet land in the order asked.
final class IndexWriterTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("index-writer-\(UUID().uuidString)")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: folder)
    }

    func testWritesLandInOrderOnceFlushedAndARemovalIsNeverUndoneByAnEarlierListing() {
        let database = StateDatabase.open(at: folder.appendingPathComponent("state.sqlite").path)
        let queue = DispatchQueue(label: "test.state")
        let writer = IndexWriter(database: database, queue: queue)
        let identity = FileIdentity(size: 5, modifiedNanoseconds: 7, inode: 9)
        let kept = LibraryFile(path: "/library/Kept.cbz"), gone = LibraryFile(path: "/library/Gone.cbz")
        // Held on the queue, every write below waits in one batch: the order inside it counts.
        let hold = DispatchSemaphore(value: 0)
        queue.async { hold.wait() }
        for number in 0..<50 {
            writer.store(LibraryFile(path: "/library/\(number).cbz"), identity: identity, .failure(.noPages(path: "\(number)")))
        }
        writer.store(gone, identity: identity, .failure(.noPages(path: "gone")))
        writer.remove(gone)
        writer.remove(kept)
        writer.store(kept, identity: identity, .failure(.encrypted(path: "kept")))
        XCTAssertEqual(database.indexedComicCount, 0, "nothing written on the caller's thread")
        hold.signal()
        queue.sync { writer.flush() }
        XCTAssertEqual(database.indexedComicCount, 51)
        XCTAssertNil(database.indexedListing(gone, identity: identity), "stored, then removed: gone")
        guard case .failure(.encrypted)? = database.indexedListing(kept, identity: identity) else {
            return XCTFail("removed, then stored: kept")
        }
    }
}

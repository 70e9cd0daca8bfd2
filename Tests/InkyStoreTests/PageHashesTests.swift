import Foundation
import InkyCore
import XCTest
@testable import InkyStore

/// Page hashes are kept under the file's key (path, size, mtime, inode) like its listing: a
/// changed file has none until hashed again, and a comic removed or purged loses them.
final class PageHashesTests: XCTestCase {
    private var folder: URL!

    override func setUp() { folder = FileManager.default.temporaryDirectory.appendingPathComponent("page-hashes-\(UUID().uuidString)") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    func testHashesAnswerOnlyForTheIdentityTheyWereMadeFor() {
        let state = StateDatabase.open(at: folder.appendingPathComponent("state.sqlite").path)
        let file = LibraryFile(path: "/lib/a.cbz"), identity = FileIdentity(size: 5, modifiedNanoseconds: 7, inode: 9)
        let hashes = (0..<64).map { UInt8($0) }
        state.storePageHashes(file, identity: identity, hashes)
        XCTAssertEqual(state.pageHashes(file, identity: identity), hashes)
        XCTAssertNil(state.pageHashes(file, identity: FileIdentity(size: 5, modifiedNanoseconds: 8, inode: 9)), "the file changed")
        XCTAssertNil(state.pageHashes(LibraryFile(path: "/lib/b.cbz"), identity: identity))
        state.removeFromIndex(file)
        XCTAssertNil(state.pageHashes(file, identity: identity), "a comic gone from the index keeps no hashes")
    }

    func testAPurgedComicLeavesNoHashes() throws {
        let state = StateDatabase.open(at: folder.appendingPathComponent("state.sqlite").path)
        let file = LibraryFile(path: "/lib/private.cbz"), identity = FileIdentity(size: 5, modifiedNanoseconds: 7, inode: 9)
        state.storePageHashes(file, identity: identity, Array(repeating: 1, count: 32))
        XCTAssertEqual(try state.purge(paths: [file.path]).rowsDeleted, 1)
        XCTAssertNil(state.pageHashes(file, identity: identity))
    }
}

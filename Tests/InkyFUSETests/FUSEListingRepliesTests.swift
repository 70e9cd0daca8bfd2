import InkyCore
import InkyTree
import XCTest
@testable import InkyFUSE

/// Replies encoded ahead are the bytes the request would have been answered with, and are sent
/// only under the stamp they were made under.
final class FUSEListingRepliesTests: XCTestCase {
    func testAPreparedReplyIsTheReplyTheRequestWouldHaveMade() throws {
        let tree = ComicTree(pages: 16)
        let replies = FUSEListingReplies()
        replies.prepare(ComicTree.comic, in: tree)
        let ready = try XCTUnwrap(replies.take(ComicTree.comic, stamp: tree.stamp))
        let entries = try tree.directoryEntries(of: ComicTree.comic).get()
        let made = DirectoryBuffer.fill(request: nil, directory: ComicTree.comic, parent: 1, entries: entries, offset: 0,
                                        size: FUSEListingReplies.replySize, attributes: { tree.attributesWithoutListing(of: $0) })
        XCTAssertEqual(ready.bytes, made.bytes)
        XCTAssertEqual(ready.remembered.map(\.name), entries.map(\.name))
        XCTAssertEqual(ready.next, entries.count + 2, "the reply reaches the directory's end")
        XCTAssertNil(replies.take(ComicTree.comic, stamp: tree.stamp), "sent once")
    }

    func testAReplyMadeUnderAnotherStampIsNotSent() {
        let tree = ComicTree(pages: 16)
        let replies = FUSEListingReplies()
        replies.prepare(ComicTree.comic, in: tree)
        tree.stamp = ListingStamp(2)
        XCTAssertNil(replies.take(ComicTree.comic, stamp: tree.stamp))
        XCTAssertFalse(replies.isReady(ComicTree.comic), "dropped, not kept for later")
    }

    func testDirectoriesWithoutAStampOrTooLongForOnePageAreNotMadeAhead() {
        let replies = FUSEListingReplies()
        let folder = ComicTree(pages: 16)
        folder.stamp = nil
        replies.prepare(ComicTree.comic, in: folder)
        XCTAssertFalse(replies.isReady(ComicTree.comic))
        replies.prepare(ComicTree.comic, in: ComicTree(pages: 400))
        XCTAssertFalse(replies.isReady(ComicTree.comic), "400 pages take several requests: listed at each")
    }

    func testRepliesNeverAskedForAreBounded() {
        let tree = ComicTree(pages: 4)
        let replies = FUSEListingReplies()
        for id in 0..<NodeID(FUSEListingReplies.limit + 10) { replies.prepare(100 + id, in: tree) }
        XCTAssertTrue(replies.isReady(100))
        XCTAssertFalse(replies.isReady(100 + NodeID(FUSEListingReplies.limit)), "no room past the limit")
    }
}

/// Directory 2 (and any other but the root) holds `pages` pages with their attributes, as a
/// library comic's listing gives them.
private final class ComicTree: MountedFilesystem, @unchecked Sendable {
    static let comic: NodeID = 2
    let pages: Int
    var stamp: ListingStamp? = ListingStamp(1)
    var kernelCache: (any KernelCacheInvalidating)?
    init(pages: Int) { self.pages = pages }
    var sourcePath: String { "/library" }
    func listingStamp(of id: NodeID) -> ListingStamp? { stamp }
    func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> { .failure(.ENOENT) }
    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> { .failure(.ENOENT) }
    func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        .success((0..<pages).map { index in
            let page = id << 16 + NodeID(index)
            let attributes = NodeAttributes(id: page, kind: .regularFile, size: Int64(1000 + index), permissions: 0o444,
                                            modifiedNanoseconds: 1_700_000_000_000_000_000, entryTimeout: 86_400, attributeTimeout: 86_400)
            return DirectoryEntry(name: String(format: "%03d.jpg", index + 1), id: page, kind: .regularFile, attributes: attributes)
        })
    }
    func attributesWithoutListing(of entry: DirectoryEntry) -> NodeAttributes? { entry.attributes }
    func remember(_ entry: DirectoryEntry) {}
    func parent(of id: NodeID) -> NodeID { 1 }
    func directoryListed(_ id: NodeID) {}
    func open(_ id: NodeID) -> Result<OpenedFile, Errno> { .failure(.EISDIR) }
    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) { completion(.failure(.EISDIR)) }
    func release(_ id: NodeID) {}
    func readLink(_ id: NodeID) -> Result<String, Errno> { .failure(.EINVAL) }
    func extendedAttributes(of id: NodeID) -> [String: [UInt8]] { [:] }
    func forget(_ id: NodeID, count: UInt64) {}
}

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
        tree.handOver(ComicTree.comic, to: replies)
        let ready = try XCTUnwrap(replies.take(ComicTree.comic, stamp: tree.stamp))
        let entries = try tree.directoryEntries(of: ComicTree.comic).get()
        let made = DirectoryBuffer.fill(request: nil, directory: ComicTree.comic, parent: 1, entries: entries, offset: 0,
                                        size: replies.replySize, attributes: { tree.attributesWithoutListing(of: $0) })
        XCTAssertEqual(ready.bytes, made.bytes)
        XCTAssertEqual(ready.remembered.map(\.name), entries.map(\.name))
        XCTAssertEqual(ready.next, entries.count + 2, "the reply reaches the directory's end")
        XCTAssertNil(replies.take(ComicTree.comic, stamp: tree.stamp), "sent once")
    }

    func testAReplyMadeUnderAnotherStampIsNotSent() {
        let tree = ComicTree(pages: 16)
        let replies = FUSEListingReplies()
        tree.handOver(ComicTree.comic, to: replies)
        tree.stamp = ListingStamp(2)
        XCTAssertNil(replies.take(ComicTree.comic, stamp: tree.stamp))
        XCTAssertFalse(replies.isReady(ComicTree.comic), "dropped, not kept for later")
    }

    func testDirectoriesLongerThanTheKernelAsksForAreNotMadeAhead() {
        let replies = FUSEListingReplies()
        XCTAssertEqual(replies.replySize, 4096, "a page, until the kernel says otherwise")
        ComicTree(pages: 24).handOver(ComicTree.comic, to: replies)
        XCTAssertFalse(replies.isReady(ComicTree.comic), "26 entries of 160 bytes pass a page: listed at its request")
        ComicTree(pages: 16).handOver(ComicTree.comic, to: replies)
        XCTAssertTrue(replies.isReady(ComicTree.comic))
    }

    /// Long comics' replies are bounded by their bytes too (400 pages: 64 KiB each).
    func testRepliesNeverTakeMoreThanTheirByteLimit() {
        let replies = FUSEListingReplies()
        replies.replySize = 65_536
        let tree = ComicTree(pages: 400)
        for id in 0..<NodeID(60) { tree.handOver(100 + id, to: replies) }
        let kept = (0..<NodeID(60)).filter { replies.isReady(100 + $0) }
        XCTAssertEqual(kept.count, FUSEListingReplies.byteLimit / (402 * 160), "402 entries of 160 bytes each: as many as 2 MiB holds")
        XCTAssertEqual(kept.last, 59, "the newest")
    }

    /// Since Linux 6.14 the kernel asks for as much as the reader's buffer (ls: 64 KiB).
    func testRepliesAreMadeAsLongAsTheKernelAsksFor() throws {
        let replies = FUSEListingReplies()
        replies.replySize = 65_536
        let tree = ComicTree(pages: 24)
        tree.handOver(ComicTree.comic, to: replies)
        let ready = try XCTUnwrap(replies.take(ComicTree.comic, stamp: tree.stamp))
        XCTAssertEqual(ready.next, 26)
        XCTAssertGreaterThan(ready.bytes.count, 4096)
        ComicTree(pages: 400).handOver(ComicTree.comic, to: replies)
        XCTAssertTrue(replies.isReady(ComicTree.comic), "400 pages fit 64 KiB")
    }

    /// A walk that got ahead of its replies leaves them unasked for: they give way to the
    /// next ones, which it does ask for.
    func testRepliesNeverAskedForGiveWayOldestFirst() {
        let tree = ComicTree(pages: 4)
        let replies = FUSEListingReplies()
        let limit = NodeID(FUSEListingReplies.limit)
        for id in 0..<limit + 10 { tree.handOver(100 + id, to: replies) }
        XCTAssertEqual((0..<limit + 10).filter { replies.isReady(100 + $0) }, Array(10..<limit + 10), "the newest, up to the limit")
        XCTAssertNotNil(replies.take(100 + 10, stamp: tree.stamp))
        tree.handOver(100 + limit + 10, to: replies)
        XCTAssertTrue(replies.isReady(100 + 11), "one taken made room: nothing else gave way")
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
    func parent(of id: NodeID) -> NodeID { 1 }
    func directoryListed(_ id: NodeID) {}
    func open(_ id: NodeID, caller: Caller) -> Result<OpenedFile, Errno> { .failure(.EISDIR) }
    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?, caller: Caller,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) { completion(.failure(.EISDIR)) }
    func release(_ id: NodeID) {}
    func readLink(_ id: NodeID) -> Result<String, Errno> { .failure(.EINVAL) }
    func extendedAttributes(of id: NodeID) -> [String: [UInt8]] { [:] }

    /// What listing ahead does with a directory it loaded (`KernelCacheInvalidating.listingReady`).
    func handOver(_ id: NodeID, to replies: FUSEListingReplies) {
        replies.prepare(id, stamp: stamp!, entries: try! directoryEntries(of: id).get(), in: self)
    }
}

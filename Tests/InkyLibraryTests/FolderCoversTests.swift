import Foundation
import InkyCore
import InkyTestSupport
import Synchronization
import XCTest
@testable import InkyLibrary

/// The folders' covers on their own, without a mount or a worker: which comic a folder's cover
/// comes from, what a failed making leaves, and that a folder none of whose comics gives one is
/// told to the library's hook (the tree's part: the kernel forgets its `folder.jpg`).
final class FolderCoversTests: XCTestCase {
    private let folder = ArchiveMaker.temporaryDirectory("folder-covers")
    private var library: URL { folder.appendingPathComponent("library") }
    private let identity = FileIdentity(size: 1_000, modifiedNanoseconds: 1_700_000_000_000_000_000, inode: 42)

    override func setUpWithError() throws {
        let series = library.appendingPathComponent("Series")
        try FileManager.default.createDirectory(at: series, withIntermediateDirectories: true)
        for name in ["A.cbz", "B.cbz"] { try Data().write(to: series.appendingPathComponent(name)) }
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func makeCovers() -> FolderCovers {
        FolderCovers(cache: CoverCache(directory: folder.appendingPathComponent("covers").path, capacity: 1 << 20), log: { _ in })
    }

    private func index() throws -> FolderIndex {
        try FolderIndex.build(root: LibraryRoot(path: library.path), relativePath: "Series", identity: identity).get()
    }

    /// A comic whose cover does not decode is not tried again this mount, and the folder's cover
    /// comes from the next comic; one made is served from the cache after, without a making.
    func testAFailedComicIsSkippedAndAMadeCoverIsServedFromTheCache() throws {
        let covers = makeCovers()
        let index = try index()
        let sameFile: (String) -> FileIdentity? = { [identity] _ in identity }
        XCTAssertEqual(covers.comic(index, identity: sameFile)?.comic, "Series/A.cbz", "the first comic in reading order")

        let broken = covers.cover(of: "Series/A.cbz", identity: identity, remaking: false) { () throws(ComicError) -> [UInt8] in
            throw .corrupted(path: "Series/A.cbz", detail: "the page does not decode")
        }
        XCTAssertEqual(broken.failureValue, .EIO)
        let again = covers.cover(of: "Series/A.cbz", identity: identity, remaking: false) { () throws(ComicError) -> [UInt8] in
            XCTFail("a comic whose cover failed is not made again")
            return []
        }
        XCTAssertEqual(again.failureValue, .EIO)
        XCTAssertEqual(covers.comic(index, identity: sameFile)?.comic, "Series/B.cbz", "the next comic gives the folder's cover")

        let made = covers.cover(index, identity: sameFile) { comic in
            covers.cover(of: comic, identity: self.identity, remaking: true) { () throws(ComicError) -> [UInt8] in [0xFF, 0xD8, 0xFF, 1] }
        }
        XCTAssertEqual(made, [0xFF, 0xD8, 0xFF, 1])
        let cached = covers.cover(index, identity: sameFile) { _ in
            XCTFail("a cover in the cache is not made again")
            return .failure(.EIO)
        }
        XCTAssertEqual(cached, [0xFF, 0xD8, 0xFF, 1])
        XCTAssertEqual(try covers.folderFile(index, identity: sameFile) { _ in .failure(.EIO) }.get().count, CoverSize.bytes,
                       "folder.jpg is as long as it was listed")
    }

    /// A making that finds no cover tells the hook which folder; a folder whose cover is in the
    /// cache queues no making at all.
    func testAFolderWithoutACoverIsToldToTheHookAndACachedOneIsNotMadeAgain() throws {
        let covers = makeCovers()
        let told = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        covers.whenNoCover { folder in
            told.withLock { $0.append(folder) }
            done.signal()
        }
        let first = try XCTUnwrap(covers.comic(try index(), identity: { [identity] _ in identity }))
        covers.queue(folder: "Series", first: first) { false }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(told.withLock { $0 }, ["Series"])

        covers.cache?.store(first.key, [0xFF, 0xD8, 0xFF])
        covers.queue(folder: "Series", first: first) {
            XCTFail("a cover in the cache is not made again")
            return false
        }
        // The makings run one at a time, in order: once this one ran, the one above would have.
        let after = DispatchSemaphore(value: 0)
        covers.inBackground("after") { after.signal() }
        XCTAssertEqual(after.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(told.withLock { $0 }, ["Series"])
    }
}

private extension Result {
    var failureValue: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}

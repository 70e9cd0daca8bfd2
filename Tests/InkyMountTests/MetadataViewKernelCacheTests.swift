import Foundation
import InkyCore
import InkyStore
import InkyTestSupport
import InkyTree
import Synchronization
import XCTest
@testable import InkyLibrary
@testable import InkyMount

/// What `By Series/` tells the kernel to forget. At 100,000 comics its folders' links pass the
/// budget the view keeps in memory; a folder dropped for the budget was told to the kernel to
/// forget, so every `ls -lR` of the views asked for all of them again. Now the kernel keeps a
/// dropped folder until its comics move.
final class MetadataViewKernelCacheTests: XCTestCase {
    final class Recorder: KernelCacheInvalidating {
        let told = Mutex<[String]>([])
        func invalidateEntry(parent: NodeID, name: String) { told.withLock { $0.append("entry \(parent) \(name)") } }
        func invalidateNode(_ id: NodeID) { told.withLock { $0.append("node \(id)") } }
    }

    private var library: URL!
    private var stateFolder: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("view-cache")
        stateFolder = ArchiveMaker.temporaryDirectory("view-cache-state")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: stateFolder)
    }

    /// Comic `issue` of `series` on disk, indexed with that series (`mtime` its file's).
    private func comic(_ state: StateDatabase, series: String, issue: Int, mtime: Int64) throws {
        let url = library.appendingPathComponent("\(series)/Issue \(issue).cbz")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try ArchiveMaker.zip(at: url, members: [("1.jpg", Array("\(series) \(issue)".utf8))])
        var listing = ComicListing(format: .zip, pages: [Page(number: 0, name: "1.jpg", sourcePath: "1.jpg", entryIndex: 0, size: 10)],
                                   comicInfo: nil, skipped: [], isSolid: false)
        listing.metadata = ComicMetadata(source: .comicInfo, series: series, number: String(issue))
        state.storeListing(LibraryFile(path: url.path), identity: FileIdentity(size: 10, modifiedNanoseconds: mtime, inode: 1), .success(listing))
    }

    func testFoldersDroppedForTheBudgetStayInTheKernelUntilTheirComicsMove() throws {
        let state = StateDatabase.open(at: stateFolder.appendingPathComponent("state.sqlite").path)
        for series in ["Alpha", "Beta", "Gamma"] {
            for issue in 1...4 { try comic(state, series: series, issue: issue, mtime: 100) }
        }
        let filesystem = LibraryFilesystem(library: library.path, options: MountOptions(), backend: NumberedLibraryTests.TwoPages(), state: state)
        let catalog = MetadataCatalog(state: state, libraryPath: library.path)
        // A folder of 4 links weighs 5: each folder read drops the one read before.
        let view = MetadataTreeView(.series, catalog: catalog, library: filesystem, folderBudget: 5)
        let mount = MountComposition(sourcePath: library.path, base: NumberedLibrary(filesystem), views: [view])
        let kernel = Recorder()
        mount.kernelCache = kernel
        catalog.start()
        XCTAssertTrue(view.isShownWhenLookedUp())
        let root = try mount.lookup(parent: 1, name: "By Series").get().id
        let folders = try mount.directoryEntries(of: root).get()
        XCTAssertEqual(folders.map(\.name), ["Alpha", "Beta", "Gamma"])
        for folder in folders {
            let links = try mount.directoryEntries(of: folder.id).get()
            XCTAssertEqual(links.count, 4, folder.name)
            for link in links { XCTAssertEqual(try mount.readLink(link.id).get(), "../../\(folder.name)/Issue \(link.name.last!)") }
        }

        // Beta's comic rewritten: Beta goes (its name at the view's root drops what the kernel
        // holds under it), Alpha, dropped for the budget and unchanged, stays; Gamma, kept, is
        // compared link by link and has nothing to tell.
        try comic(state, series: "Beta", issue: 2, mtime: 200)
        let beta = try XCTUnwrap(folders.first { $0.name == "Beta" }).id
        XCTAssertTrue(waitUntil(10) { kernel.told.withLock { $0.contains("entry \(root) Beta") } }, "\(kernel.told.withLock { $0 })")
        let told = kernel.told.withLock { $0 }
        XCTAssertTrue(told.contains("node \(beta)"), "\(told)")
        let alpha = try XCTUnwrap(folders.first { $0.name == "Alpha" }).id
        XCTAssertFalse(told.contains { $0 == "node \(alpha)" || $0.hasPrefix("entry \(alpha) ") || $0 == "entry \(root) Alpha" },
                       "a folder dropped for the budget is kept by the kernel: \(told)")
        XCTAssertFalse(told.contains { $0.hasPrefix("entry \(root) Gamma") }, "\(told)")
    }

    /// A view that appears tells the kernel its root changed, never to forget the view's name:
    /// the kernel keeps no "no such name", and a lookup that waited for the first tree
    /// (`isShownWhenLookedUp`) holds the view, whose forgetting dropped all the kernel had listed
    /// under it (at 100,000 comics, a thousand links read again by every later walk). A view
    /// that goes is forgotten by name.
    func testAViewThatAppearsKeepsItsNameInTheKernelAndOneThatGoesIsForgotten() throws {
        let state = StateDatabase.open(at: stateFolder.appendingPathComponent("state.sqlite").path)
        let filesystem = LibraryFilesystem(library: library.path, options: MountOptions(), backend: NumberedLibraryTests.TwoPages(), state: state)
        let catalog = MetadataCatalog(state: state, libraryPath: library.path)
        let view = MetadataTreeView(.series, catalog: catalog, library: filesystem)
        let mount = MountComposition(sourcePath: library.path, base: NumberedLibrary(filesystem), views: [view])
        let kernel = Recorder()
        mount.kernelCache = kernel
        catalog.start()
        XCTAssertFalse(view.isShownWhenLookedUp(), "nothing indexed, nothing to show")

        for issue in 1...3 { try comic(state, series: "Alpha", issue: issue, mtime: 100) }
        XCTAssertTrue(waitUntil(10) { kernel.told.withLock { $0.contains("node 1") } }, "the root's listing and link count changed")
        XCTAssertTrue(view.isShown)
        XCTAssertEqual(try mount.lookup(parent: 1, name: "By Series").get().kind, .directory)
        let told = kernel.told.withLock { $0 }
        XCTAssertFalse(told.contains { $0.hasPrefix("entry 1 ") }, "the view's name stays in the kernel: \(told)")

        for issue in 1...3 { state.removeFromIndex(LibraryFile(path: library.appendingPathComponent("Alpha/Issue \(issue).cbz").path)) }
        XCTAssertTrue(waitUntil(10) { kernel.told.withLock { $0.contains("entry 1 By Series") } }, "\(kernel.told.withLock { $0 })")
        XCTAssertTrue(waitUntil(10) { kernel.told.withLock { $0.filter { $0 == "node 1" }.count == 2 } }, "\(kernel.told.withLock { $0 })")
        XCTAssertFalse(view.isShown)
    }
}

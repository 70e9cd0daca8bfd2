import Foundation
import InkyArchive
import InkyCore
import InkyTestSupport
import InkyMount
import XCTest
@testable import InkyLibrary
import InkyTree
@testable import InkyWorker

/// The library tree without FUSE, over an in-process backend, so naming and generation rules
/// are checked directly (the mount tests check them again through the kernel).
final class LibraryFilesystemTests: XCTestCase {
    /// Parses in this process; fine for trusted test archives.
    struct InProcessBackend: ComicBackend {
        func list(_ source: ComicSource, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity) {
            let path = source.path
            let identity = try FileIdentity.of(path).mapError { ComicError.io(path: path, errno: $0.code, detail: "\($0)") }.get()
            return (try ComicOpener.open(path, limits: limits).listing, identity)
        }

        func read(_ source: ComicSource, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits,
                  deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) {
            let path = source.path
            let reader = try ComicOpener.open(path, limits: limits)
            for entry in entries {
                do throws(ComicError) { deliver(entry.source, .success(try reader.readPage(entry.page))) } catch { deliver(entry.source, .failure(error)) }
            }
        }

        func comicInfo(_ source: ComicSource, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]? {
            try ComicOpener.open(source.path, limits: limits).readComicInfo()
        }
    }

    private func read(_ filesystem: NumberedLibrary, _ id: NodeID, size: Int = 1 << 24) -> Result<[UInt8], Errno> {
        let done = DispatchSemaphore(value: 0)
        let box = LockedResult()
        filesystem.read(id, offset: 0, size: size, descriptor: nil, caller: .thisProcess) { result in
            box.set(result.map(Array.init))
            done.signal()
        }
        done.wait()
        return box.get()
    }

    /// A comic directory's `stat` is its file's: a comic whose state is not kept is answered
    /// without loading its listing (the kernel asks once per folder after each listing on a
    /// mount that is not `ro`, and at 20,000 comics that loaded 20,000 listings from the index),
    /// and a changed file shows its new time at once.
    func testAComicDirectorysAttributesComeFromItsFileWithoutLoadingIt() throws {
        let library = ArchiveMaker.temporaryDirectory("lib")
        defer { try? FileManager.default.removeItem(at: library) }
        let comic = library.appendingPathComponent("A.cbz")
        try ArchiveMaker.zip(at: comic, members: [("1.jpg", [1, 1, 1])])
        let core = LibraryFilesystem(library: library.path, options: MountOptions(), backend: InProcessBackend())
        let node = Node.comic(.library("A.cbz"))
        let modified = { try XCTUnwrap(FileManager.default.attributesOfItem(atPath: comic.path)[.modificationDate] as? Date) }
        let seconds = { (attributes: NodeAttributes) in Double(attributes.modifiedNanoseconds) / 1e9 }
        let attributes = try core.attributes(of: node).get()
        XCTAssertEqual(attributes.kind, .directory)
        XCTAssertEqual(seconds(attributes), try modified().timeIntervalSince1970, accuracy: 0.001)
        XCTAssertNil(core.comicState(.library("A.cbz")), "not loaded for its attributes")
        XCTAssertEqual(core.backendListings, 0)

        try FileManager.default.setAttributes([.modificationDate: try modified().addingTimeInterval(5)], ofItemAtPath: comic.path)
        // What a listing of the last second saw of the file is forgotten by the watcher when it changes.
        core.recentChecks.forget(under: ["A.cbz"])
        XCTAssertEqual(seconds(try core.attributes(of: node).get()), try modified().timeIntervalSince1970, accuracy: 0.001)
    }

    /// A library folder's link count (2 + its subdirectories: folders and comics) follows the
    /// folder: kept while its identity stays, counted again once it moves.
    func testAFoldersLinkCountFollowsItsSubdirectories() throws {
        let library = ArchiveMaker.temporaryDirectory("lib")
        defer { try? FileManager.default.removeItem(at: library) }
        try ArchiveMaker.zip(at: library.appendingPathComponent("A.cbz"), members: [("1.jpg", [1])])
        try Data("notes".utf8).write(to: library.appendingPathComponent("notes.txt"))
        let core = LibraryFilesystem(library: library.path, options: MountOptions(), backend: InProcessBackend())
        XCTAssertEqual(try core.attributes(of: .folder("")).get().linkCount, 2 + 1, "A, not notes.txt")
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Series"), withIntermediateDirectories: false)
        let written = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: library.path)[.modificationDate] as? Date)
        try FileManager.default.setAttributes([.modificationDate: written.addingTimeInterval(5)], ofItemAtPath: library.path)
        XCTAssertEqual(try core.attributes(of: .folder("")).get().linkCount, 2 + 2, "A and Series")
        var asCBZ = MountOptions()
        asCBZ.comicsAsCBZ = true
        let cbz = LibraryFilesystem(library: library.path, options: asCBZ, backend: InProcessBackend())
        XCTAssertEqual(try cbz.attributes(of: .folder("")).get().linkCount, 2 + 1, "A.cbz is a file")
    }

    func testAReplacedArchiveGetsNewPageNodesAndOldOnesGoStale() throws {
        let library = ArchiveMaker.temporaryDirectory("lib")
        defer { try? FileManager.default.removeItem(at: library) }
        let comic = library.appendingPathComponent("A.cbz")
        try ArchiveMaker.zip(at: comic, members: [("1.jpg", [1, 1, 1])])
        let filesystem = NumberedLibrary(LibraryFilesystem(library: library.path, options: MountOptions(), backend: InProcessBackend()))
        let directory = try filesystem.lookup(parent: NumberedLibrary.rootID, name: "A").get()
        XCTAssertEqual(directory.kind, .directory)
        let oldPage = try filesystem.lookup(parent: directory.id, name: "001.jpg").get()
        XCTAssertEqual(try read(filesystem, oldPage.id).get(), [1, 1, 1])

        try ArchiveMaker.zip(at: comic, members: [("1.jpg", [2, 2]), ("2.jpg", [3])])
        // A new mtime, set rather than waited for (a second's sleep, on a coarse-timestamp filesystem).
        let written = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: comic.path)[.modificationDate] as? Date)
        try FileManager.default.setAttributes([.modificationDate: written.addingTimeInterval(1)], ofItemAtPath: comic.path)
        let newPage = try filesystem.lookup(parent: directory.id, name: "001.jpg").get()
        XCTAssertNotEqual(newPage.id, oldPage.id, "a new generation, a new inode")
        XCTAssertEqual(try read(filesystem, newPage.id).get(), [2, 2])
        XCTAssertEqual(filesystem.attributes(of: oldPage.id).map(\.size), .failure(.ESTALE))
        XCTAssertEqual(read(filesystem, oldPage.id).map(\.count), .failure(.ESTALE))
        XCTAssertEqual(try filesystem.directoryEntries(of: directory.id).get().map(\.name), ["001.jpg", "002.jpg"])
    }

    func testFolderNamesHideExtensionsUnlessTheyCollide() throws {
        let library = ArchiveMaker.temporaryDirectory("lib")
        defer { try? FileManager.default.removeItem(at: library) }
        for name in ["X.cbz", "X.cbr", "Y.cbz", "notes.txt", ".cbz"] {
            try ArchiveMaker.zip(at: library.appendingPathComponent(name), members: [("1.jpg", [1])])
        }
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Y"), withIntermediateDirectories: true)
        let index = try FolderIndex.build(root: LibraryRoot(path: library.path), relativePath: "",
                                          identity: try FileIdentity.of(library.path).get()).get()
        XCTAssertEqual(index.names, [".cbz", "X.cbr", "X.cbz", "Y", "Y.cbz", "notes.txt"])
        XCTAssertEqual(index["Y"], .folder("Y"))
        XCTAssertEqual(index["notes.txt"], .file("notes.txt"))
        XCTAssertEqual(index[".cbz"], .file(".cbz"), "no name left without the extension: a plain file")
    }

    func testUnreadableComicsHoldOnlyErrorText() throws {
        let filesystem = NumberedLibrary(LibraryFilesystem(library: Corpus.fixtures.path, options: MountOptions(), backend: InProcessBackend()))
        let broken = try filesystem.lookup(parent: NumberedLibrary.rootID, name: "Broken").get()
        let comic = try filesystem.lookup(parent: broken.id, name: "Not A Comic").get()
        let entries = try filesystem.directoryEntries(of: comic.id).get()
        XCTAssertEqual(entries.map(\.name), ["ERROR.txt"])
        let text = String(decoding: try read(filesystem, entries[0].id).get(), as: UTF8.self)
        XCTAssertTrue(text.contains("not a comic archive"), text)
        XCTAssertEqual(try filesystem.attributes(of: entries[0].id).get().size, Int64(text.utf8.count), "exact size before the read")
    }
}

final class LockedResult: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Result<[UInt8], Errno> = .failure(.EIO)
    func set(_ result: Result<[UInt8], Errno>) { lock.withLock { stored = result } }
    func get() -> Result<[UInt8], Errno> { lock.withLock { stored } }
}

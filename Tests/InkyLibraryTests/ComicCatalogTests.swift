import Foundation
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyLibrary

/// The catalog on its own, without a mount or a backend: what it keeps of a folder, what a comic
/// it drops leaves behind, and that the vault's comics go apart from the library's.
final class ComicCatalogTests: XCTestCase {
    private let old = FileIdentity(size: 1_000, modifiedNanoseconds: 1_700_000_000_000_000_000, inode: 42)
    private let new = FileIdentity(size: 2_000, modifiedNanoseconds: 1_700_000_000_000_000_001, inode: 42)
    private var library: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("catalog")
        try Data().write(to: library.appendingPathComponent("A.cbz"))
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
    }

    private func makeCatalog(_ checks: RecentComicChecks = RecentComicChecks()) -> ComicCatalog {
        ComicCatalog(root: LibraryRoot(path: library.path), comicSuffix: "", recentChecks: checks)
    }

    /// A folder is read again when its identity moved, not at every lookup: the identity is
    /// given by hand, as a timestamp's granularity could leave a real one unmoved by a write.
    func testAFolderIsReadAgainOnlyWhenItsIdentityMoved() throws {
        let checks = RecentComicChecks()
        let catalog = makeCatalog(checks)
        XCTAssertEqual(try catalog.folderIndex("", identity: old).get().names, ["A"])
        XCTAssertNotNil(checks.check("A.cbz"), "the listing leaves what it saw of each comic")
        try Data().write(to: library.appendingPathComponent("B.cbz"))
        XCTAssertEqual(try catalog.folderIndex("", identity: old).get().names, ["A"], "the index kept")
        XCTAssertEqual(try catalog.folderIndex("", identity: new).get().names.sorted(), ["A", "B"])
    }

    /// What the watcher saw change is read again at the next use, whatever the folder's identity
    /// says: a comic rewritten in place leaves its folder's mtime alone, and its index keeps what
    /// the listing saw of the comic's file. Folders elsewhere stay kept.
    func testTheFoldersHoldingWhatChangedAreReadAgain() throws {
        let catalog = makeCatalog()
        for folder in ["S", "S/Inner", "T"] {
            try FileManager.default.createDirectory(at: library.appendingPathComponent(folder), withIntermediateDirectories: true)
            try Data().write(to: library.appendingPathComponent(folder + "/1.cbz"))
        }
        for folder in ["S", "S/Inner", "T"] {
            XCTAssertEqual(try catalog.folderIndex(folder, identity: old).get().names, ["1"] + (folder == "S" ? ["Inner"] : []))
        }
        XCTAssertEqual(try catalog.folderIndex("", identity: old).get().names, ["A", "S", "T"])
        for folder in ["", "S", "S/Inner", "T"] { try Data().write(to: library.appendingPathComponent(folder + "/2.cbz")) }

        catalog.forgetFolders(holding: ["S/1.cbz"])
        XCTAssertEqual(try catalog.folderIndex("S", identity: old).get().names, ["1", "2", "Inner"], "the folder holding the comic")
        XCTAssertEqual(try catalog.folderIndex("T", identity: old).get().names, ["1"], "kept")
        XCTAssertEqual(try catalog.folderIndex("S/Inner", identity: old).get().names, ["1"], "kept")
        XCTAssertEqual(try catalog.folderIndex("", identity: old).get().names, ["A", "S", "T"], "kept")

        catalog.forgetFolders(holding: ["S"])
        XCTAssertEqual(try catalog.folderIndex("S/Inner", identity: old).get().names, ["1", "2"], "beneath a folder that changed")
        XCTAssertEqual(try catalog.folderIndex("", identity: old).get().names, ["2", "A", "S", "T"], "holding it")
        XCTAssertEqual(try catalog.folderIndex("T", identity: old).get().names, ["1"], "kept")

        catalog.forgetFolders(holding: [""])
        XCTAssertEqual(try catalog.folderIndex("T", identity: old).get().names, ["1", "2"], "a rescan forgets every folder")
    }

    /// A comic whose file vanished and came back gets the generation it had: the kernel may
    /// still hold its pages under those numbers, and a new one would make them stale.
    func testAVanishedComicComesBackWithItsGeneration() {
        let catalog = makeCatalog()
        let comic = ComicRef.library("A.cbz")
        let state = catalog.comic(comic, readFrom: library.path + "/A.cbz")
        XCTAssertTrue(catalog.comic(comic) === state)
        _ = state.replace(old, catalog.generations)
        _ = state.replace(new, catalog.generations)
        let changed = state.generation
        XCTAssertNotEqual(changed, Int(new.generation & ComicGenerations.firstSeenMask), "a change is numbered by the counter")

        catalog.vanished(comic)
        XCTAssertNil(catalog.comic(comic))
        let back = catalog.comic(comic, readFrom: library.path + "/A.cbz")
        XCTAssertFalse(back === state, "a state made anew")
        _ = back.replace(new, catalog.generations)
        XCTAssertEqual(back.generation, changed)
    }

    /// Unlock and lock drop the vault's comics, every one, and leave the library's alone.
    func testTheVaultsComicsGoTogetherAndTheLibrarysStay() {
        let catalog = makeCatalog()
        let kept = catalog.comic(.library("A.cbz"), readFrom: library.path + "/A.cbz")
        _ = catalog.comic(.vault("0a1b"), readFrom: "/vault/objects/0a1b")
        _ = catalog.comic(.vault("2c3d"), readFrom: "/vault/objects/2c3d")
        XCTAssertEqual(Set(catalog.dropVaultComics().map(\.comic)), [.vault("0a1b"), .vault("2c3d")])
        XCTAssertNil(catalog.comic(.vault("0a1b")))
        XCTAssertTrue(catalog.comic(.library("A.cbz")) === kept)
        XCTAssertEqual(catalog.dropVaultComics().count, 0)
    }
}

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

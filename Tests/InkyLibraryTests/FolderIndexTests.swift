import Foundation
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyLibrary

/// A folder's index as bytes: every entry found by its shown name as a Swift dictionary would
/// find it, its node rebuilt with the folder's path, what the listing saw of each comic, and a
/// size small enough for the catalog's budget to hold a 100,000-comic library's folders.
final class FolderIndexTests: XCTestCase {
    private var library: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("folder-index")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
    }

    private func build(_ folder: String) throws -> FolderIndex {
        let url = folder.isEmpty ? library! : library.appendingPathComponent(folder)
        return try FolderIndex.build(root: LibraryRoot(path: library.path), relativePath: folder,
                                     identity: try FileIdentity.of(url.path).get()).get()
    }

    func testEveryEntryIsFoundByItsNameWithItsPathAndWhatItsListingSaw() throws {
        let folder = "Publisher/Series"
        let url = library.appendingPathComponent(folder)
        try FileManager.default.createDirectory(at: url.appendingPathComponent("Extras"), withIntermediateDirectories: true)
        // Short and long names (a String of 15 bytes or less is kept inline), accents, a link.
        let comics = ["A.cbz", "Issue 010 (2021) (Digital) (Group).cbr", "Été.cb7", "Z.pdf"]
        for name in comics + ["notes.txt"] { try Data().write(to: url.appendingPathComponent(name)) }
        try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("Elsewhere").path, withDestinationPath: "/tmp")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000_000), .posixPermissions: 0o640],
                                              ofItemAtPath: url.appendingPathComponent("Z.pdf").path)

        let index = try build(folder)
        XCTAssertEqual(index.names, ["A", "Elsewhere", "Extras", "Issue 010 (2021) (Digital) (Group)", "Z", "notes.txt", "Été"])
        XCTAssertEqual(index.names, index.names.sorted(), "in the order a sorted dictionary's keys had")
        XCTAssertEqual(index["Issue 010 (2021) (Digital) (Group)"], .comic(.library(folder + "/Issue 010 (2021) (Digital) (Group).cbr")))
        XCTAssertEqual(index["Extras"], .folder(folder + "/Extras"))
        XCTAssertEqual(index["Elsewhere"], .link(folder + "/Elsewhere"))
        XCTAssertEqual(index["notes.txt"], .file(folder + "/notes.txt"))
        XCTAssertNil(index["Issue 010"])
        XCTAssertNil(index["Z.pdf"], "a comic is shown without its extension")
        // The kernel hands back the bytes it was given, but a name typed in the other Unicode
        // normalization is the same name to String, and so it was to the dictionary before.
        XCTAssertEqual(index["E\u{301}te\u{301}"], .comic(.library(folder + "/Été.cb7")))
        // By path: the comic's file name, in either normalization, in this folder and as that kind only.
        XCTAssertEqual(index.position(ofPath: folder + "/Z.pdf"), index.position(of: "Z"))
        XCTAssertTrue(index.contains(.comic(.library(folder + "/E\u{301}te\u{301}.cb7"))))
        XCTAssertTrue(index.contains(.folder(folder + "/Extras")))
        XCTAssertFalse(index.contains(.comic(.library(folder + "/Extras"))))
        XCTAssertNil(index.position(ofPath: "Publisher/Z.pdf"), "another folder's")
        XCTAssertNil(index.position(ofPath: folder + "/Z"))
        for position in 0..<index.count {
            XCTAssertEqual(index.position(of: index.name(position)), position)
            XCTAssertEqual(index.entries[position].node, index.node(position))
        }

        var info = stat()
        XCTAssertEqual(lstat(url.appendingPathComponent("Z.pdf").path, &info), 0)
        let seen = try XCTUnwrap(index.check(try XCTUnwrap(index.position(of: "Z"))))
        XCTAssertEqual(seen.identity, FileIdentity(info))
        XCTAssertEqual(seen.permissions, SourcePermissions(info))
        XCTAssertNil(index.check(try XCTUnwrap(index.position(of: "Extras"))), "only comics carry a check")
        XCTAssertNil(index.check(try XCTUnwrap(index.position(of: "notes.txt"))))
        XCTAssertEqual(index.subdirectories, 5, "Extras and the four comics")
    }

    /// The budget (`WeightedLRU.folderIndexes`, 12 MiB) holds about 130,000 comics because an
    /// entry weighs about 90 bytes; kept as strings and dictionaries it weighed about 300.
    func testAComicWeighsUnderADozenDozenBytes() throws {
        for series in 1...4 {
            let url = library.appendingPathComponent("Series \(series)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for issue in 1...25 { try Data().write(to: url.appendingPathComponent(String(format: "Series %04d #%03d.cbz", series, issue))) }
        }
        let indexes = try (1...4).map { try build("Series \($0)") }
        let perComic = Double(indexes.map(\.bytes).reduce(0, +)) / 100
        XCTAssertLessThan(perComic, 120, "bytes a comic in its folder's index")
        XCTAssertGreaterThan(perComic, 60, "the weight counts the names, their places and the checks")
    }
}

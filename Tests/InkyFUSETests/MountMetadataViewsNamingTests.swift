import Foundation
import InkyTestSupport
import XCTest

/// What `By Series/` is called through a real mount: one folder per series however its tags
/// spell it, volumes apart only when two of a kind disagree (`v2` for a volume number, the year
/// for a run), and links that would read alike naming their files.
final class MountMetadataViewsNamingTests: XCTestCase {
    private let temporary = TemporaryFolders()

    override func tearDown() { temporary.removeAll() }

    private func folder(_ label: String) -> URL { temporary.make(label) }

    /// `LC_ALL=C ls -A` of a folder of the mount, one name per element; [] while it is missing.
    private func ls(_ mounted: MountedLibrary, _ path: String) -> [String] {
        let result = try? CommandRunner.capture("/usr/bin/env", ["LC_ALL=C", "ls", "-A", mounted.path(path)])
        guard let result, result.status == 0 else { return [] }
        return result.stdout.split(separator: "\n").map(String.init)
    }

    private func tagged(_ library: URL, _ path: String, seed: UInt64, _ fields: [(String, String)]) throws {
        try MetadataLibraryFixture.comic(library.appendingPathComponent(path), seed: seed,
                                         members: fields.isEmpty ? [] : [MetadataLibraryFixture.comicInfo(fields)])
    }

    func testOneFolderPerSeriesVolumesApartOnlyWhenTheyDifferAndAlikeLinksNameTheirFiles() throws {
        let library = folder("views-naming")
        // Two runs of Batman by year, and an issue that names none: three folders.
        try tagged(library, "Batman/b2011.cbz", seed: 1, [("Series", "Batman"), ("Number", "1"), ("Volume", "2011")])
        try tagged(library, "Batman/b2016.cbz", seed: 2, [("Series", "Batman"), ("Number", "1"), ("Volume", "2016")])
        try tagged(library, "Batman/b.cbz", seed: 3, [("Series", "Batman"), ("Number", "5")])
        // One series spelled three ways, one issue naming volume 1, two publishers: one folder.
        try tagged(library, "Spidey/a.cbz", seed: 4, [("Series", "Spider-Man"), ("Number", "1"), ("Publisher", "Marvel")])
        try tagged(library, "Spidey/b.cbz", seed: 5, [("Series", "Spider-Man"), ("Number", "2")])
        try tagged(library, "Spidey/c.cbz", seed: 6, [("Series", "SPIDER MAN"), ("Number", "3"), ("Volume", "1"), ("Publisher", "Marvel Comics")])
        // Volumes 1 and 2 by their file names alone: two folders.
        try tagged(library, "Saga/Saga v1 #001.cbz", seed: 7, [])
        try tagged(library, "Saga/Saga v2 #001.cbz", seed: 8, [])
        // Alike: two by their names, two by names that are the same in two folders.
        try tagged(library, "Hero/Hero #2 scan.cbz", seed: 9, [("Series", "Hero"), ("Number", "2")])
        try tagged(library, "Hero/Hero #2 c2c.cbz", seed: 10, [("Series", "Hero"), ("Number", "2")])
        try tagged(library, "Dupes/Hero #1.cbz", seed: 11, [("Series", "Hero"), ("Number", "1")])
        try tagged(library, "Other/Hero #1.cbz", seed: 12, [("Series", "Hero"), ("Number", "1")])
        let mounted = try MountedLibrary(library: library, arguments: ["--state", folder("views-naming-state").path], views: true)
        defer { mounted.unmount() }

        let series = ["Batman", "Batman (2011)", "Batman (2016)", "Hero", "Saga v1", "Saga v2", "Spider-Man v1"]
        XCTAssertTrue(waitUntil(20) { ls(mounted, "By Series") == series && ls(mounted, "By Series/Hero").count == 4 },
                      "\(ls(mounted, "By Series"))\n\(mounted.logText)")
        XCTAssertEqual(ls(mounted, "By Series/Batman"), ["001 Batman #5"])
        XCTAssertEqual(ls(mounted, "By Series/Batman (2016)"), ["001 Batman #1"])
        XCTAssertEqual(ls(mounted, "By Series/Spider-Man v1"), ["001 Spider-Man #1", "002 Spider-Man #2", "003 SPIDER MAN #3"])
        XCTAssertEqual(ls(mounted, "By Series/Saga v2"), ["001 Saga #1"])
        XCTAssertEqual(ls(mounted, "By Series/Hero"), ["001 Hero #1 [Dupes-Hero #1.cbz]", "002 Hero #1 [Other-Hero #1.cbz]",
                                                         "003 Hero #2 [Hero #2 c2c]", "004 Hero #2 [Hero #2 scan]"])
        XCTAssertEqual(try ArchiveMaker.run("/usr/bin/readlink", [mounted.path("By Series/Hero/002 Hero #1 [Other-Hero #1.cbz]")]),
                       "../../Other/Hero #1\n")
        XCTAssertEqual(ls(mounted, "By Publisher/Marvel"), ["Spider-Man v1"])
        XCTAssertEqual(ls(mounted, "By Publisher/Marvel Comics"), ["Spider-Man v1"])

        // A Hero issue naming volume 3 takes the whole series to `Hero v3`: the kernel, which
        // holds the old listings, is told.
        try tagged(library, "Hero/Hero #3.cbz", seed: 13, [("Series", "Hero"), ("Number", "3"), ("Volume", "3")])
        XCTAssertTrue(waitUntil(60) { ls(mounted, "By Series").contains("Hero v3") && !ls(mounted, "By Series").contains("Hero") },
                      "\(ls(mounted, "By Series"))")
        XCTAssertEqual(ls(mounted, "By Series/Hero v3").count, 5)
        XCTAssertEqual(ls(mounted, "By Series/Hero"), [])
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs duplicates --json` on a library with planted duplicates of each kind it finds, and
/// comics that only look alike: it finds the planted ones and nothing else.
final class DuplicatesCommandTests: XCTestCase {
    private var folder: URL!

    override func setUp() { folder = ArchiveMaker.temporaryDirectory("duplicates") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    func testPlantedDuplicatesOfEachKindAndNothingElse() throws {
        let library = folder.appendingPathComponent("library")
        let planted = try DuplicateLibrary.plant(in: library)
        let result = try CommandRunner.inkyfs(["duplicates", "--json", "--state", folder.appendingPathComponent("state").path, library.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try DuplicateLibrary.groups(in: result.stdout), planted.expected)
        // Each of the ten comics of one 400-byte page, and the five of three such pages, is hashed once.
        let database = folder.appendingPathComponent("state/state.sqlite").path
        func stored() throws -> String {
            try CommandRunner.capture("/usr/bin/sqlite3", [database, "SELECT count(*), sum(length(pages)), group_concat(rowid) FROM page_hashes"])
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let hashed = try stored()
        XCTAssertTrue(hashed.hasPrefix("15|\(32 * (10 + 5 * 3))|"), hashed)
        // A second run hashes nothing again (a row written again would get a new rowid).
        let again = try CommandRunner.inkyfs(["duplicates", "--json", "--state", folder.appendingPathComponent("state").path, library.path])
        XCTAssertEqual(try DuplicateLibrary.groups(in: again.stdout), planted.expected)
        XCTAssertEqual(try stored(), hashed)
    }

    /// A comic whose page cannot be read (its stored bytes fail their CRC-32) is not compared by
    /// pages, is said so on stderr, and takes nothing down: its twin of good bytes is no duplicate.
    func testAComicWhosePagesCannotBeReadIsNamedAndLeftOut() throws {
        let library = folder.appendingPathComponent("library")
        let page = ArchiveMaker.noise(count: 500, seed: 41)
        let good = library.appendingPathComponent("Good 001.cbz"), bad = library.appendingPathComponent("Bad 001.cbz")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try ArchiveMaker.zip(at: good, members: [("001.jpg", page)])
        var bytes = try Data(contentsOf: good)
        let start = try XCTUnwrap(bytes.range(of: Data(page))).lowerBound
        bytes[start + 100] ^= 0xFF
        try bytes.write(to: bad)
        let result = try CommandRunner.inkyfs(["duplicates", "--json", "--state", folder.appendingPathComponent("state").path, library.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try DuplicateLibrary.groups(in: result.stdout), [])
        XCTAssertTrue(result.stderr.contains("the pages of 1 comic could not all be read") && result.stderr.contains(bad.path), result.stderr)
    }

    /// The copy kept is the best: each group below is decided by one rule, and keeping the
    /// shortest name (as `duplicates` did) would keep the other comic of each.
    func testTheCopyKeptIsTaggedThenFiledThenFullerThenTheShortestName() throws {
        let library = folder.appendingPathComponent("library")
        func write(_ relative: String, info: String?, seeds: [UInt64]) throws -> String {
            let url = library.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try ArchiveMaker.zip(at: url, members: (info.map { [("ComicInfo.xml", Array("<ComicInfo>\($0)</ComicInfo>".utf8))] } ?? [])
                + seeds.enumerated().map { ("\($0.offset + 1).jpg", ArchiveMaker.noise(count: 400, seed: 2 * $0.element + 1)) })
            return url.path
        }
        // Tagged over untagged: the same pages, the untagged one's name shorter.
        let untagged = try write("Tags/T.cbz", info: nil, seeds: [1, 2])
        let tagged = try write("Tags/T tagged.cbz", info: "<Series>T</Series><Number>1</Number>", seeds: [1, 2])
        // Filed over loose: the same bytes, in Downloads/ under a shorter name.
        let filed = try write("Bolt (2020)/Bolt 001 (2020).cbz", info: "<Series>Bolt</Series><Number>1</Number>", seeds: [3])
        let loose = library.appendingPathComponent("Downloads/b.cbz").path
        try FileManager.default.createDirectory(atPath: (loose as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: filed, toPath: loose)
        // More pages over fewer: one issue by its tags, with its covers and without.
        let fewer = try write("Comet/Comet 1.cbz", info: "<Series>Comet</Series><Number>1</Number>", seeds: [4])
        let more = try write("Comet/Comet 1 c2c.cbz", info: "<Series>Comet</Series><Number>1</Number>", seeds: [5, 6, 7])
        // A browser's "(1)" copy that someone tagged, beside the untagged download.
        let download = try write("Echo/Echo 1.cbz", info: nil, seeds: [8])
        let copy = try write("Echo/Echo 1 (1).cbz", info: "<Series>Echo</Series><Number>1</Number>", seeds: [9])

        let result = try CommandRunner.inkyfs(["duplicates", "--json", "--state", folder.appendingPathComponent("state").path, library.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try DuplicateLibrary.groups(in: result.stdout), ["identical: \(filed) | \(loose)", "same-pages: \(tagged) | \(untagged)",
                                                                        "copy: \(copy) | \(download)", "possible: \(more) | \(fewer)"])
        let help = try CommandRunner.inkyfs(["help", "duplicates"])
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        XCTAssertTrue(words.contains("the best copy: tagged (ComicInfo.xml, CoMet.xml or ComicBookInfo) over known by its file name alone; "
                                     + "then filed in its series' folder"), help.stdout)
        XCTAssertTrue(words.contains("then more pages over fewer; then the shortest file name; then the oldest file"), help.stdout)
    }
}

/// A library with one planted duplicate of each kind, and near misses that must not match.
enum DuplicateLibrary {
    struct Planted {
        /// "kind: keep | extra..." per group, as `groups(in:)` renders them.
        var expected: [String]
        /// The extras (moved by --move-to without --move-possible), and the comics kept.
        var extras: [String]
        var possibleExtra: String
    }

    static func comic(_ library: URL, _ relative: String, seed: UInt64, info: String? = nil) throws -> String {
        let url = library.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let members = (info.map { [("ComicInfo.xml", Array("<ComicInfo>\($0)</ComicInfo>".utf8))] } ?? [])
            + [("001.jpg", ArchiveMaker.noise(count: 400, seed: 2 * seed + 1))] // noise makes n and n | 1 alike
        try ArchiveMaker.zip(at: url, members: members)
        return url.path
    }

    static func plant(in library: URL) throws -> Planted {
        let original = try comic(library, "Saga/Saga 001.cbz", seed: 1)
        let identical = library.appendingPathComponent("Elsewhere/Saga 001 again.cbz")
        try FileManager.default.createDirectory(at: identical.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: original, toPath: identical.path)
        let base = try comic(library, "Hellboy/Hellboy 003.cbz", seed: 2)
        let copy = try comic(library, "Hellboy/Hellboy 003 (1).cbz", seed: 3)
        let tag = "<Series>Batman</Series><Number>1</Number><Volume>2011</Volume>"
        let tagged = try comic(library, "Batman/Batman 001.cbz", seed: 4, info: tag)
        let retagged = try comic(library, "Batman/Batman 001 scan.cbz", seed: 5, info: tag)
        // Look-alikes that are not duplicates: another volume, another number, a same-sized
        // archive of other bytes, a "(1)" with no original beside it.
        _ = try comic(library, "Batman/Batman 001 v2016.cbz", seed: 6, info: "<Series>Batman</Series><Number>1</Number><Volume>2016</Volume>")
        _ = try comic(library, "Batman/Batman 002.cbz", seed: 7, info: "<Series>Batman</Series><Number>2</Number><Volume>2011</Volume>")
        _ = try comic(library, "Saga/Saga 002.cbz", seed: 8)
        _ = try comic(library, "Loose/Orphan (1).cbz", seed: 9)
        // One scan in three containers (names, tags and order of members differ; the pages are
        // the same bytes in the same reading order), and two near misses of the same page sizes:
        // the same pages reordered, and one page changed.
        let pages = (0..<3).map { ArchiveMaker.noise(count: 400, seed: 101 + 2 * UInt64($0)) }
        let scan = library.appendingPathComponent("Invincible")
        let zipped = scan.appendingPathComponent("Invincible 005.cbz"), rar = scan.appendingPathComponent("Invincible 005.cbr")
        let sevenZip = scan.appendingPathComponent("Invincible 005.cb7")
        try FileManager.default.createDirectory(at: scan, withIntermediateDirectories: true)
        let info = ("ComicInfo.xml", Array("<ComicInfo><Title>Scan</Title></ComicInfo>".utf8))
        try GeneratedComic.write([
            .init([info] + pages.enumerated().map { ("\($0.offset + 1).jpg", $0.element) }, as: .zipStored, to: zipped),
            .init(pages.enumerated().reversed().map { ("page-\($0.offset + 1).jpg", $0.element) }, as: .rar5, to: rar),
            .init(pages.enumerated().map { ("p0\($0.offset + 1).jpg", $0.element) } + [("scan.nfo", Array("ripped".utf8))],
                  as: .sevenZipSolid, to: sevenZip),
            .init([pages[1], pages[0], pages[2]].enumerated().map { ("\($0.offset + 1).jpg", $0.element) },
                  as: .zipDeflated, to: scan.appendingPathComponent("Invincible 005 reordered.cbz")),
            .init([pages[0], pages[1], ArchiveMaker.noise(count: 400, seed: 999)].enumerated().map { ("\($0.offset + 1).jpg", $0.element) },
                  as: .tar, to: scan.appendingPathComponent("Invincible 005 fixed.cbt")),
        ])
        // The tagged CBZ first; equally long names keep the first by age, then by path: one age for all three.
        for url in [zipped, rar, sevenZip] {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_600_000_000)], ofItemAtPath: url.path)
        }
        return Planted(expected: ["identical: \(original) | \(identical.path)",
                                  "same-pages: \(zipped.path) | \(sevenZip.path) | \(rar.path)",
                                  "copy: \(base) | \(copy)", "possible: \(tagged) | \(retagged)"],
                       extras: [identical.path, sevenZip.path, rar.path, copy], possibleExtra: retagged)
    }

    /// `--json`'s groups (or its "groups" with --move-to) as "kind: first | second...".
    static func groups(in json: String) throws -> [String] {
        let value = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let groups = try XCTUnwrap((value as? [[String: Any]]) ?? ((value as? [String: Any])?["groups"] as? [[String: Any]]))
        return groups.map { "\($0["kind"] as? String ?? "?"): \(($0["comics"] as? [String] ?? []).joined(separator: " | "))" }
    }
}

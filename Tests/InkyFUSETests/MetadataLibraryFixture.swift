import Foundation
import InkyTestSupport
import XCTest

/// Generated libraries for the metadata views: comics tagged with ComicInfo.xml, CoMet.xml and
/// ComicBookInfo, comics known only by their file names, and comics with hostile tags.
enum MetadataLibraryFixture {
    /// A comic of two pages whose bytes depend on `seed`, with these extra members.
    static func comic(_ url: URL, seed: UInt64, members: [(String, [UInt8])] = []) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try ArchiveMaker.zip(at: url, members: members + [("001.jpg", firstPage(seed: seed)),
                                                          ("002.jpg", ArchiveMaker.noise(count: 500, seed: 2 * seed + 2001))])
    }

    /// 001.jpg of the comic made with `seed` (odd noise seeds: `noise` makes n and n | 1 alike).
    static func firstPage(seed: UInt64) -> [UInt8] { ArchiveMaker.noise(count: 700, seed: 2 * seed + 1) }

    static func comicInfo(_ fields: [(String, String)]) -> (String, [UInt8]) {
        let body = fields.map { "<\($0.0)>\($0.1)</\($0.0)>" }.joined()
        return ("ComicInfo.xml", Array("<?xml version=\"1.0\"?>\n<ComicInfo>\(body)</ComicInfo>".utf8))
    }

    /// Batman (2011) in ComicInfo.xml, two arcs, Saga by file name only, Invincible in CoMet.xml
    /// and Hellboy in a ZIP comment (ComicBookInfo). Returns each comic's path in the library.
    @discardableResult
    static func tagged(at library: URL) throws -> [String] {
        let batman: [(String, String, String, [(String, String)])] = [
            ("Batman/Batman 010.cbz", "10", "2013", [("Month", "2"), ("StoryArc", "Night of the Owls, Death of the Family"), ("StoryArcNumber", "3,1")]),
            ("Batman/Batman 002.cbz", "2", "2011", [("StoryArc", "Night of the Owls"), ("StoryArcNumber", "1")]),
            ("Batman/Extras/half.cbz", "1.5", "2012", []),
            ("Batman/Batman 001.cbz", "1", "2011", [("StoryArc", "Night of the Owls"), ("StoryArcNumber", "2")]),
            ("Batman/Batman Annual.cbz", "Annual 1", "2012", []),
        ]
        var comics: [String] = []
        for (index, (path, number, year, extra)) in batman.enumerated() {
            let fields = [("Series", "Batman"), ("Number", number), ("Volume", "2011"), ("Publisher", "DC Comics"), ("Year", year)] + extra
            try comic(library.appendingPathComponent(path), seed: UInt64(index), members: [comicInfo(fields)])
            comics.append(path)
        }
        for (index, path) in ["Loose/Saga v1 #054 (2018).cbz", "Loose/Saga v1 #003 (2012).cbz"].enumerated() {
            try comic(library.appendingPathComponent(path), seed: UInt64(20 + index))
            comics.append(path)
        }
        let coMet = "<?xml version=\"1.0\"?><comet><series>Invincible</series><issue>7</issue><volume>1</volume><publisher>Image</publisher><date>2004-01-15</date></comet>"
        try comic(library.appendingPathComponent("Loose/inv7.cbz"), seed: 30, members: [("CoMet.xml", Array(coMet.utf8))])
        comics.append("Loose/inv7.cbz")
        let hellboy = library.appendingPathComponent("Loose/hb.cbz")
        try ArchiveMaker.python("""
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w") as z:
                z.writestr("001.jpg", bytes(range(256)) * 3)
                z.comment = b'{"ComicBookInfo/1.0":{"series":"Hellboy","issue":3,"volume":1,"publisher":"Dark Horse","publicationYear":1994}}'
            """, arguments: [hellboy.path])
        comics.append("Loose/hb.cbz")
        return comics
    }

    /// The tagged library, indexed ahead into its own state folder (metadata and all): every view
    /// has its content from a mount's first moment. `folder(label)` makes an empty folder that
    /// the calling test removes after it.
    static func indexedLibrary(in folder: (String) -> URL, file: StaticString = #filePath, line: UInt = #line) throws
        -> (library: URL, state: URL) {
        let library = folder("indexed-library"), state = folder("indexed-state")
        try tagged(at: library)
        let indexed = try CommandRunner.inkyfs(["index", library.path, "--state", state.path])
        XCTAssertEqual(indexed.status, 0, indexed.stderr, file: file, line: line)
        return (library, state)
    }

    /// Tags anyone could write: slashes, `..`, control characters, 10,000 characters, XML that
    /// is not XML, an entity bomb, numbers like ½, -1 and ∞. Returns each comic's path.
    static func hostile(at library: URL) throws -> [String] {
        let long = String(repeating: "Ω", count: 10_000)
        let cases: [(String, [(String, [UInt8])])] = [
            ("slash.cbz", [comicInfo([("Series", "AC/DC/../../etc"), ("Number", "½"), ("Publisher", "../..")])]),
            ("dotdot.cbz", [comicInfo([("Series", ".."), ("Number", "-1"), ("StoryArc", ".,..,/")])]),
            ("control.cbz", [comicInfo([("Series", "Evil&#7;&#10;Name\u{202E}"), ("Number", "1.5"), ("StoryArc", "Arc&#0009;One")])]),
            ("long.cbz", [comicInfo([("Series", long), ("Number", "Annual 1"), ("Publisher", long), ("StoryArc", long)])]),
            ("invalid.cbz", [("ComicInfo.xml", Array("<ComicInfo><Series>Broken</Series>".utf8))]),
            ("bomb.cbz", [("ComicInfo.xml", Array("""
                <?xml version="1.0"?><!DOCTYPE b [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
                <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><ComicInfo><Series>&c;</Series></ComicInfo>
                """.utf8))]),
            ("infinity.cbz", [comicInfo([("Series", "Infinity"), ("Number", "∞")])]),
            ("minus.cbz", [comicInfo([("Series", "Infinity"), ("Number", "-1")])]),
        ]
        for (index, (name, members)) in cases.enumerated() {
            try comic(library.appendingPathComponent("Hostile/" + name), seed: UInt64(40 + index), members: members)
        }
        return cases.map { "Hostile/" + $0.0 }
    }
}

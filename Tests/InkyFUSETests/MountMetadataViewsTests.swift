import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// The metadata views through a real mount: `By Series/`, `By Publisher/`, `Story Arcs/` and
/// `Recently Added/` list the right comics in the right order as links that resolve to the
/// comics' folders, tools that walk the mount see each comic once, hostile tags stay names,
/// and a re-tagged comic moves once the library watcher sees the change (how soon is
/// scripts/bench's to measure: a test bounds only a hang).
final class MountMetadataViewsTests: XCTestCase {
    private let temporary = TemporaryFolders()

    override func tearDown() { temporary.removeAll() }

    private func folder(_ label: String) -> URL { temporary.make(label) }

    private func mount(_ library: URL, _ arguments: [String] = []) throws -> MountedLibrary {
        try MountedLibrary(library: library, arguments: ["--state", folder("views-state").path] + arguments, views: true)
    }

    /// `LC_ALL=C ls -A` of a folder of the mount, one name per element; [] while it is missing.
    private func ls(_ mounted: MountedLibrary, _ path: String) -> [String] {
        let result = try? CommandRunner.capture("/usr/bin/env", ["LC_ALL=C", "ls", "-A", mounted.path(path)])
        guard let result, result.status == 0 else { return [] }
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// Waits until `condition` holds, at most `seconds`; returns how long it took, nil if never.
    private func waited(_ seconds: Double, _ condition: () -> Bool) -> Double? {
        let start = Date()
        while !condition() {
            if Date().timeIntervalSince(start) > seconds { return nil }
            usleep(20_000)
        }
        return Date().timeIntervalSince(start)
    }

    private func resolved(_ mounted: MountedLibrary, _ path: String) throws -> String {
        try ArchiveMaker.run("/usr/bin/readlink", ["-f", mounted.path(path)]).trimmingCharacters(in: .newlines)
    }

    /// A library laid out `Series (Year)/Issue 001.cbz` or `Series/001.cbz`, untagged: each comic
    /// goes under its folder's series, not all under "Issue" or each number its own.
    func testComicsNamedOnlyByNumberGoUnderTheirFoldersSeries() throws {
        let library = folder("numbered-library")
        for (index, path) in ["Moon Tales (2019)/Issue 001.cbz", "Moon Tales (2019)/Issue 002.cbz", "Star Rider/001.cbz",
                              "Star Rider/#2.cbz", "Star Rider/Chapter 3.cbz"].enumerated() {
            try MetadataLibraryFixture.comic(library.appendingPathComponent(path), seed: UInt64(index + 1))
        }
        let mounted = try mount(library)
        defer { mounted.unmount() }
        let rider = ["001 Star Rider #1", "002 Star Rider #2", "003 Star Rider #3"]
        XCTAssertNotNil(waited(60) { ls(mounted, "By Series") == ["Moon Tales", "Star Rider"] && ls(mounted, "By Series/Star Rider") == rider },
                        "\(ls(mounted, "By Series")) \(ls(mounted, "By Series/Star Rider"))\n\(mounted.logText)")
        XCTAssertEqual(ls(mounted, "By Series/Moon Tales"), ["001 Moon Tales #1 (2019)", "002 Moon Tales #2 (2019)"])
        XCTAssertEqual(try resolved(mounted, "By Series/Star Rider/002 Star Rider #2"), mounted.path("Star Rider/#2"))
    }

    /// Served as CBZ files, the views' links keep the extension: readers that filter by it
    /// (KOReader, most Android readers) would otherwise show the views empty.
    func testUnderAsCBZEveryLinkEndsInCBZAndLeadsToTheCBZFile() throws {
        let library = folder("views-cbz-library")
        _ = try MetadataLibraryFixture.tagged(at: library)
        let mounted = try mount(library, ["--as", "cbz"])
        defer { mounted.unmount() }
        XCTAssertNotNil(waited(20) { ls(mounted, "By Series/Saga v1").count == 2 && !ls(mounted, "Recently Added").isEmpty }, mounted.logText)
        XCTAssertEqual(ls(mounted, "By Series/Saga v1"), ["001 Saga #3 (2012).cbz", "002 Saga #54 (2018).cbz"])
        for view in ["By Series/Batman (2011)", "Recently Added"] {
            for link in ls(mounted, view) {
                XCTAssertTrue(link.hasSuffix(".cbz"), "\(view)/\(link)")
                XCTAssertTrue(try resolved(mounted, "\(view)/\(link)").hasSuffix(".cbz"), "\(view)/\(link) leads to the CBZ file")
            }
        }
        let cbz = try readFile(mounted.path("By Series/Saga v1/001 Saga #3 (2012).cbz"))
        XCTAssertEqual(Array(cbz.prefix(4)), [0x50, 0x4B, 0x03, 0x04], "a ZIP through the link")
    }

    func testViewsListTheComicsByWhatTheyAreAndLeadBackIntoTheLibrary() throws {
        let library = folder("views-library")
        let comics = try MetadataLibraryFixture.tagged(at: library)
        // Recently Added follows the files' mtimes: the Saga #3 file is the newest.
        let saga3 = library.appendingPathComponent("Loose/Saga v1 #003 (2012).cbz").path
        XCTAssertEqual(utimes(saga3, [timeval(tv_sec: time(nil) + 60, tv_usec: 0), timeval(tv_sec: time(nil) + 60, tv_usec: 0)]), 0)
        let mounted = try mount(library)
        defer { mounted.unmount() }
        let batman = ["001 Batman #1 (2011)", "002 Batman #1.5 (2012)", "003 Batman #2 (2011)", "004 Batman #10 (2013)",
                      "005 Batman #Annual 1 (2012)"]
        // The listing pass fills the views comic by comic: wait for all of them, then judge.
        XCTAssertNotNil(waited(20) { ls(mounted, "By Series/Batman (2011)") == batman && ls(mounted, "By Series").count == 4
                            && ls(mounted, "Recently Added").count == comics.count },
                        "\(ls(mounted, "By Series/Batman (2011)")) \(ls(mounted, "By Series"))\n\(mounted.logText)")
        XCTAssertEqual(ls(mounted, "By Series"), ["Batman (2011)", "Hellboy v1", "Invincible v1", "Saga v1"])
        XCTAssertEqual(ls(mounted, "By Series/Saga v1"), ["001 Saga #3 (2012)", "002 Saga #54 (2018)"])
        XCTAssertEqual(ls(mounted, "By Publisher"), ["DC Comics", "Dark Horse", "Image"])
        XCTAssertEqual(ls(mounted, "By Publisher/DC Comics"), ["Batman (2011)"])
        XCTAssertEqual(ls(mounted, "Story Arcs"), ["Death of the Family", "Night of the Owls"])
        XCTAssertEqual(ls(mounted, "Story Arcs/Night of the Owls"), ["001 Batman #2 (2011)", "002 Batman #1 (2011)", "003 Batman #10 (2013)"])
        XCTAssertEqual(ls(mounted, "Recently Added").count, comics.count)
        XCTAssertEqual(ls(mounted, "Recently Added").first, "001 Saga #3 (2012)")
        XCTAssertFalse(ls(mounted, "").contains("Reading Lists"), "a view with nothing in it is not shown")

        // Each link is relative and resolves to the comic's folder in the mount, pages and all.
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: mounted.path("By Series/Batman (2011)/002 Batman #1.5 (2012)")),
                       "../../Batman/Extras/half")
        XCTAssertEqual(try resolved(mounted, "By Series/Batman (2011)/004 Batman #10 (2013)"), mounted.path("Batman/Batman 010"))
        XCTAssertEqual(try resolved(mounted, "By Publisher/DC Comics/Batman (2011)"), mounted.path("By Series/Batman (2011)"))
        XCTAssertEqual(try resolved(mounted, "Recently Added/001 Saga #3 (2012)"), mounted.path("Loose/Saga v1 #003 (2012)"))
        XCTAssertEqual(try readFile(mounted.path("By Series/Saga v1/002 Saga #54 (2018)/001.jpg")),
                       MetadataLibraryFixture.firstPage(seed: 20))
        XCTAssertEqual(try readFile(mounted.path("By Publisher/DC Comics/Batman (2011)/004 Batman #10 (2013)/002.jpg")),
                       try readFile(mounted.path("Batman/Batman 010/002.jpg")))

        // find, du and rsync -a (which do not follow links) meet every comic's pages once.
        let pages = try ArchiveMaker.run("/usr/bin/find", [mounted.path(""), "-name", "001.jpg"]).split(separator: "\n")
        XCTAssertEqual(pages.count, comics.count, "\(pages)")
        XCTAssertNoThrow(try ArchiveMaker.run("/usr/bin/du", ["-s", mounted.path("")]))
        let copy = folder("views-rsync")
        try ArchiveMaker.run("/usr/bin/rsync", ["-a", mounted.path("") + "/", copy.path + "/"])
        let copied = try ArchiveMaker.run("/usr/bin/find", [copy.path, "-name", "001.jpg"]).split(separator: "\n")
        XCTAssertEqual(copied.count, comics.count)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: copy.appendingPathComponent("By Series/Saga v1/001 Saga #3 (2012)").path),
                       "../../Loose/Saga v1 #003 (2012)", "copied as a link")
    }

    func testHostileTagsBecomeHarmlessNamesAndEveryComicStillReads() throws {
        let library = folder("views-hostile")
        let comics = try MetadataLibraryFixture.hostile(at: library)
        let mounted = try mount(library)
        defer { mounted.unmount() }
        XCTAssertNotNil(waited(20) { ls(mounted, "Recently Added").count == comics.count }, "\(ls(mounted, "Recently Added"))\n\(mounted.logText)")
        for (index, comic) in comics.enumerated() {
            let folder = String(comic.dropLast(4))
            XCTAssertEqual(try readFile(mounted.path(folder + "/001.jpg")), MetadataLibraryFixture.firstPage(seed: UInt64(40 + index)), comic)
        }
        let series = ls(mounted, "By Series")
        XCTAssertTrue(series.contains("AC-DC-..-..-etc"), "\(series)")
        XCTAssertTrue(series.contains("Evil Name"), "control characters are spaces, runs of them one: \(series)")
        XCTAssertTrue(series.contains("invalid") && series.contains("bomb"), "no metadata: the file name: \(series)")
        XCTAssertEqual(ls(mounted, "By Series/Infinity"), ["001 Infinity #-1", "002 Infinity #∞"])
        XCTAssertEqual(ls(mounted, "By Publisher"), ["..-..", String(repeating: "Ω", count: 88) + "…"])
        // Every name under every view is one component a tool can use, and every link leads to
        // a comic's folder inside the mount.
        for view in ["By Series", "By Publisher", "Story Arcs", "Recently Added"] {
            let walk = try ArchiveMaker.run("/usr/bin/find", [mounted.path(view), "-mindepth", "1"]).split(separator: "\n").map(String.init)
            XCTAssertFalse(walk.isEmpty, view)
            for path in walk {
                let name = (path as NSString).lastPathComponent
                XCTAssertTrue(name.utf8.count <= 255 && name != "." && name != "..", name)
                XCTAssertFalse(name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0 == "\u{202E}" }, name)
                guard (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil else { continue }
                let target = try ArchiveMaker.run("/usr/bin/readlink", ["-f", path]).trimmingCharacters(in: .newlines)
                XCTAssertTrue(target.hasPrefix(mounted.mountpoint.path + "/"), "\(path) → \(target)")
            }
        }
        XCTAssertTrue(mounted.isDaemonAlive)
    }

    /// The views are cached like the library's folders: until they tell the kernel what changed.
    func testTheKernelKeepsTheViewsUntilTheyChange() throws {
        let library = folder("views-cached")
        let comics = try MetadataLibraryFixture.tagged(at: library)
        let mounted = try mount(library, ["-o", "tree_timeout=1,debug"])
        defer { mounted.unmount() }
        // Every comic listed, so the views stay as they are.
        XCTAssertNotNil(waited(20) { ls(mounted, "Recently Added").count == comics.count }, mounted.logText)
        // Names, kinds, sizes, inodes, modes and the links' texts (the kernel keeps those too:
        // FUSE_CAP_CACHE_SYMLINKS; without, `ls -lR` of 100,000 comics' views read each again).
        let walk = ["By Series", "By Publisher", "Story Arcs", "Recently Added"].map { mounted.path($0) } + ["-printf", "%y %s %i %m %p -> %l\n"]
        let first = try ArchiveMaker.run("/usr/bin/find", walk)
        // Past the tree timeout, with the daemon quiet for that long: the views remake their
        // trees in the background when the index moved (the last listings reach it in a batch
        // up to 150 ms after they are made, and moves are spaced by what a remake costs); the
        // index reads of a remake count here as reads, so quiet means no remake under way.
        // What the kernel's own reclaim drops meanwhile it asks for again, as it should: left out.
        let drops = KernelPageDrops(mountpoint: mounted.path(""))
        XCTAssertTrue(waitUntilSteady(30, still: 1.5) { (try? daemonReads(mounted)) ?? -1 }, "the daemon settles")
        let before = mounted.requestsReceived()
        XCTAssertEqual(try ArchiveMaker.run("/usr/bin/find", walk), first)
        _ = mounted.requestsReceived()
        let reclaimed = drops?.reclaimed() ?? []
        let second = mounted.logText.components(separatedBy: ", opcode: ").dropFirst(before + 1).filter { request in
            guard let node = request.components(separatedBy: "nodeid: ").dropFirst().first?.prefix(while: \.isNumber) else { return true }
            return !reclaimed.contains(UInt64(node) ?? 0)
        }
        // On a mount that is not `ro` the kernel marks a node's access time stale when it fetches
        // its listing or link text, so find's stat of it asks its attributes once more: at most
        // one GETATTR per entry walked, not counted. A folder whose subfolders were listed has its
        // own listing dropped for that (`FUSEParentRelisting`): it is listed once more, a reply
        // and the empty one past its end, and its subfolders' attributes come with it.
        // find asks STATFS of each starting folder, which the kernel never caches: not counted.
        let counted = second.filter { !$0.hasPrefix("STATFS") }
        let attributes = counted.filter { $0.hasPrefix("GETATTR") }.count
        let entries = first.split(separator: "\n")
        let folders = entries.filter { $0.hasPrefix("d") }.map { line in
            String(line.split(separator: " ", maxSplits: 4)[4].split(separator: " -> ", maxSplits: 1, omittingEmptySubsequences: false)[0])
        }
        let holdingFolders = Set(folders.map { ($0 as NSString).deletingLastPathComponent }).intersection(folders)
        XCTAssertGreaterThan(folders.count, 8)
        XCTAssertEqual(holdingFolders.count, 3, "By Series, By Publisher and Story Arcs hold folders: \(holdingFolders)")
        let asked = counted.filter { !$0.hasPrefix("GETATTR") }.map { $0.prefix(while: { $0 != "\n" }) }
        XCTAssertEqual(asked.filter { !$0.hasPrefix("READDIRPLUS") }, [], "answered from the kernel's cache (\(reclaimed.count) nodes' pages reclaimed meanwhile, left out)")
        XCTAssertLessThanOrEqual(asked.count, 2 * holdingFolders.count, "listed again: only the folders holding folders, not: \(asked)")
        XCTAssertLessThanOrEqual(attributes, entries.count, "attributes asked at most once per entry")
    }

    /// read(2) calls the daemon made so far (requests, empty device reads, index reads): activity.
    private func daemonReads(_ mounted: MountedLibrary) throws -> Int {
        let io = try String(contentsOfFile: "/proc/\(mounted.process.processIdentifier)/io", encoding: .utf8)
        let line = try XCTUnwrap(io.split(separator: "\n").first { $0.hasPrefix("syscr:") })
        return Int(line.split(separator: " ").last ?? "") ?? 0
    }

    func testARetaggedAddedOrRemovedComicMovesItsViewsWithinTwoSeconds() throws {
        let library = folder("views-watch")
        try MetadataLibraryFixture.tagged(at: library)
        let mounted = try mount(library)
        defer { mounted.unmount() }
        XCTAssertNotNil(waited(20) { ls(mounted, "By Series/Batman (2011)").count == 5 }, mounted.logText)
        _ = ls(mounted, "By Series/Robin") // the kernel has looked for it and not found it

        // Re-tagged: written aside and renamed over, as taggers do.
        let comic = library.appendingPathComponent("Batman/Batman 002.cbz")
        let aside = library.appendingPathComponent("Batman/.Batman 002.tmp")
        try MetadataLibraryFixture.comic(aside, seed: 1, members: [MetadataLibraryFixture.comicInfo([("Series", "Robin"), ("Number", "1")])])
        XCTAssertEqual(rename(aside.path, comic.path), 0)
        let moved = waited(60) { ls(mounted, "By Series/Robin") == ["001 Robin #1"] && ls(mounted, "By Series/Batman (2011)").count == 4 }
        XCTAssertNotNil(moved, "\(ls(mounted, "By Series"))")
        XCTAssertEqual(ls(mounted, "Story Arcs/Night of the Owls"), ["001 Batman #1 (2011)", "002 Batman #10 (2013)"])

        try MetadataLibraryFixture.comic(library.appendingPathComponent("Batman/Batman 003.cbz"), seed: 9,
                                         members: [MetadataLibraryFixture.comicInfo([("Series", "Batman"), ("Number", "3"), ("Volume", "2011")])])
        let added = waited(60) { ls(mounted, "By Series/Batman (2011)").contains("003 Batman #3") }
        XCTAssertNotNil(added, "\(ls(mounted, "By Series/Batman (2011)"))")

        try FileManager.default.removeItem(at: library.appendingPathComponent("Loose/inv7.cbz"))
        let removed = waited(60) { !ls(mounted, "By Series").contains("Invincible v1") && !ls(mounted, "By Publisher").contains("Image") }
        XCTAssertNotNil(removed, "\(ls(mounted, "By Series"))")
    }

    func testReadingListsFollowTheirCBLFilesAndNameWhatIsMissing() throws {
        let library = folder("views-lists")
        try MetadataLibraryFixture.tagged(at: library)
        let book = { (series: String, number: String, volume: String) in "<Book Series=\"\(series)\" Number=\"\(number)\" Volume=\"\(volume)\" Year=\"2012\"/>" }
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Lists"), withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0"?><ReadingList><Name>Night of the Owls Reading Order</Name><Books>
            \(book("Batman", "2", "2011"))\(book("Batman", "1", "2011"))\(book("Nightwing", "9", "2011"))\(book("Batman", "10", "2011"))
            </Books></ReadingList>
            """.utf8).write(to: library.appendingPathComponent("Lists/owls.cbl"))
        let lists = folder("views-cbl")
        try Data("<ReadingList><Books>\(book("Saga", "054", "1"))\(book("Invincible", "7", "1"))\(book("Hellboy", "3", "1"))</Books></ReadingList>".utf8)
            .write(to: lists.appendingPathComponent("extra.cbl"))
        let mounted = try mount(library, ["--reading-lists", lists.path])
        defer { mounted.unmount() }
        let owls = ["001 Batman #2 (2011)", "002 Batman #1 (2011)", "004 Batman #10 (2013)", "MISSING.txt"]
        XCTAssertNotNil(waited(20) { ls(mounted, "Reading Lists/Night of the Owls Reading Order") == owls && ls(mounted, "Reading Lists/extra").count == 3 },
                        "\(ls(mounted, "Reading Lists/Night of the Owls Reading Order")) \(ls(mounted, "Reading Lists/extra"))\n\(mounted.logText)")
        XCTAssertEqual(ls(mounted, "Reading Lists"), ["Night of the Owls Reading Order", "extra"])
        XCTAssertEqual(ls(mounted, "Reading Lists/extra"), ["001 Saga #54 (2018)", "002 Invincible #7 (2004)", "003 Hellboy #3 (1994)"])
        let missing = String(decoding: try readFile(mounted.path("Reading Lists/Night of the Owls Reading Order/MISSING.txt")), as: UTF8.self)
        XCTAssertTrue(missing.hasSuffix("\n003 Nightwing #9 v2011 (2012)\n"), missing)
        XCTAssertFalse(ls(mounted, "Reading Lists/extra").contains("MISSING.txt"), "nothing missing, no file")
        XCTAssertEqual(try resolved(mounted, "Reading Lists/Night of the Owls Reading Order/004 Batman #10 (2013)"), mounted.path("Batman/Batman 010"))

        // The library is walked for lists again only when the watcher saw one come or go.
        try Data("<ReadingList><Name>Later</Name><Books>\(book("Batman", "1", "2011"))</Books></ReadingList>".utf8)
            .write(to: library.appendingPathComponent("Lists/later.cbl"))
        XCTAssertNotNil(waited(20) { ls(mounted, "Reading Lists").contains("Later") }, "\(ls(mounted, "Reading Lists"))")
        try FileManager.default.removeItem(at: library.appendingPathComponent("Lists/owls.cbl"))
        XCTAssertNotNil(waited(20) { ls(mounted, "Reading Lists") == ["Later", "extra"] }, "\(ls(mounted, "Reading Lists"))")
    }

    /// The corpus's real comics: ComicInfo.xml (at the top), CoMet.xml (in the archive's folder)
    /// and ComicTagger's tags put them under their series and publishers. Captain Science #1,
    /// tagged volume 1950 in ComicInfo.xml, volume 1 in CoMet.xml and nothing in its file names,
    /// is one series (it was three folders), and its four files tagged alike say which they are.
    func testTheCorpusRealComicsShowUnderTheirSeries() throws {
        try Corpus.skipUnlessPresent("real-comics")
        let mounted = try mount(URL(fileURLWithPath: Corpus.path("real-comics")))
        defer { mounted.unmount() }
        let captain = ["001 Captain Science #1 (1950) [Captain Science #001]", "002 Captain Science #1 (1950) [Captain Science #001-cix]",
                       "003 Captain Science #1 (1950) [Captain Science #001-cix-cbi]", "004 Captain Science #1 (1950) [Captain Science #001-comet]",
                       "005 Captain Science #1", "006 Captain Science #1-cbi", "007 Captain Science #1-cix"]
        let cory = "Cory Doctorow's Futuristic Tales of the Here and Now v1"
        // The listing pass fills the views comic by comic: wait for every series judged below.
        XCTAssertNotNil(waited(30) {
            ls(mounted, "By Series/Captain Science (1950)") == captain && !ls(mounted, "By Series/" + cory).isEmpty
                && !ls(mounted, "By Publisher/IDW Publishing").isEmpty && !ls(mounted, "By Publisher/Bell Features").isEmpty
        }, "\(ls(mounted, "By Series")) \(ls(mounted, "By Series/Captain Science (1950)"))")
        XCTAssertEqual(ls(mounted, "By Series").filter { $0.hasPrefix("Captain Science") }, ["Captain Science (1950)"])
        XCTAssertEqual(ls(mounted, "By Series/" + cory), ["001 Cory Doctorow's Futuristic Tales of the Here and Now #1 (2007)"])
        XCTAssertEqual(try resolved(mounted, "By Series/Captain Science (1950)/004 Captain Science #1 (1950) [Captain Science #001-comet]"),
                       mounted.path("comicbox/Captain Science #001-comet"))
        // Two publishers named for one series: each links the one folder.
        XCTAssertEqual(ls(mounted, "By Publisher/Bell Features"), ["Captain Science (1950)"])
        XCTAssertEqual(ls(mounted, "By Publisher/Youthful Adventure Stories"), ["Captain Science (1950)"])
        XCTAssertEqual(ls(mounted, "By Publisher/IDW Publishing"), [cory])
        XCTAssertFalse(ls(mounted, "By Series").contains("empty"), "a comic without pages is in no view")
    }

    func testViewsCanBeChosenOrTurnedOff() throws {
        let library = folder("views-choice")
        try MetadataLibraryFixture.tagged(at: library)
        let some = try mount(library, ["-o", "views=arcs,recent"])
        XCTAssertNotNil(waited(20) { ls(some, "").contains("Story Arcs") && ls(some, "").contains("Recently Added") }, some.logText)
        XCTAssertFalse(ls(some, "").contains("By Series"))
        some.unmount()
        let none = try mount(library, ["--views", "none"])
        XCTAssertEqual(ls(none, ""), ["Batman", "Continue Reading", "Loose"])
        none.unmount()
        // On unless turned off: read from the index on demand, they keep no copy of the library's metadata.
        let unasked = try mount(library)
        defer { unasked.unmount() }
        XCTAssertNotNil(waited(20) { ["By Series", "Recently Added", "Story Arcs"].allSatisfy(ls(unasked, "").contains) }, unasked.logText)
    }

    // The views are made beside the library, never in its way: while a view's tree is being made
    // (held by a test hook of debug builds) the library's folders list, look up and read; and on an
    // indexed library `By Series/` lists its series from the mount's first moment.

    /// `LC_ALL=C ls ARGUMENTS` through `timeout -s KILL` (a process waiting on FUSE can outlive
    /// SIGTERM): a request stuck behind the held view fails the test instead of hanging it.
    private func boundedLs(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.capture("/usr/bin/env", ["LC_ALL=C", "timeout", "-s", "KILL", "20", "ls"] + arguments)
    }

    func testLibraryFoldersAreServedWhileTheViewsAreBeingMade() throws {
        let (library, state) = try MetadataLibraryFixture.indexedLibrary(in: folder)
        let hold = folder("view-build-hold").appendingPathComponent("hold")
        XCTAssertTrue(FileManager.default.createFile(atPath: hold.path, contents: nil))
        let mounted = try MountedLibrary(library: library, arguments: ["--state", state.path],
                                         environment: ["INKYFS_TEST_VIEW_HOLD": hold.path], views: true)
        // A failing run lets go before it unmounts: a daemon stuck behind the hold would never exit.
        defer {
            try? FileManager.default.removeItem(at: hold)
            mounted.unmount()
        }

        // Every view's making is held: the root lists the library (stat of each entry too), none of the views.
        let root = try boundedLs(["-l", mounted.path("")])
        XCTAssertEqual(root.status, 0, root.stderr)
        XCTAssertTrue(root.stdout.contains("Batman") && root.stdout.contains("Loose"), root.stdout)
        XCTAssertFalse(root.stdout.contains("By Series"), "its making is held\n\(root.stdout)")
        let batman = try boundedLs(["-l", mounted.path("Batman")])
        XCTAssertEqual(batman.status, 0, batman.stderr)
        XCTAssertTrue(batman.stdout.contains("Batman 010") && batman.stdout.contains("Extras"), batman.stdout)
        let saga = try boundedLs(["-l", mounted.path("Loose/Saga v1 #054 (2018)")])
        XCTAssertEqual(saga.status, 0, saga.stderr)
        let page = hold.deletingLastPathComponent().appendingPathComponent("page")
        try Data(MetadataLibraryFixture.firstPage(seed: 20)).write(to: page)
        let read = try CommandRunner.capture("/usr/bin/timeout", ["-s", "KILL", "20", "cmp", mounted.path("Loose/Saga v1 #054 (2018)/001.jpg"), page.path])
        XCTAssertEqual(read.status, 0, read.stdout + read.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: hold.path), "still held while the library was served")

        // Let go, the views appear by themselves.
        try FileManager.default.removeItem(at: hold)
        let deadline = Date().addingTimeInterval(20)
        var series: [String] = []
        while Date() < deadline {
            let listed = try boundedLs(["-A", mounted.path("By Series")])
            series = listed.status == 0 ? listed.stdout.split(separator: "\n").map(String.init) : []
            if !series.isEmpty { break }
            usleep(20_000)
        }
        XCTAssertEqual(series, ["Batman (2011)", "Hellboy v1", "Invincible v1", "Saga v1"], mounted.logText)
    }

    /// No waiting loop: the lookup of `By Series` waits for that view's first tree, so the first
    /// `ls` after the mount already lists every series the index knows.
    func testBySeriesListsItsSeriesAtTheMountsFirstListing() throws {
        let (library, state) = try MetadataLibraryFixture.indexedLibrary(in: folder)
        let mounted = try MountedLibrary(library: library, arguments: ["--state", state.path], views: true)
        defer { mounted.unmount() }
        let listed = try boundedLs(["-A", mounted.path("By Series")])
        XCTAssertEqual(listed.status, 0, listed.stderr + mounted.logText)
        XCTAssertEqual(listed.stdout.split(separator: "\n").map(String.init),
                       ["Batman (2011)", "Hellboy v1", "Invincible v1", "Saga v1"])
        let batman = try boundedLs(["-A", mounted.path("By Series/Batman (2011)")])
        XCTAssertEqual(batman.stdout.split(separator: "\n").count, 5, batman.stdout + batman.stderr)
    }
}

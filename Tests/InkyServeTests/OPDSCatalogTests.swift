import Foundation
import InkyCore
import InkyLibrary
import InkyTestSupport
import InkyWorker
import XCTest

/// One `inkyfs serve` of a copy of Fixtures/Library for the class, read by real clients: curl
/// fetches, XMLParser and jing read the feeds, unzip and 7zz test the downloads, and the pages
/// are compared with what the library core gives for them.
final class OPDSCatalogTests: XCTestCase {
    nonisolated(unsafe) static var served: ServedLibrary?
    var server: ServedLibrary { Self.served! }

    override class func setUp() {
        super.setUp()
        let library = ArchiveMaker.temporaryDirectory("serve-library").appendingPathComponent("Library")
        _ = try? ArchiveMaker.run("/bin/cp", ["-R", Corpus.fixtures.path, library.path])
        served = try? ServedLibrary(library: library)
    }

    override class func tearDown() {
        if let served { XCTAssertEqual(served.stop(), 0, "SIGTERM stops the server cleanly:\n\(served.logText)") }
        served = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        guard Self.served != nil else { throw XCTSkip("the server did not start") }
    }

    /// Every feed reachable from /opds, by navigation and `next` links, each validated.
    private func crawl() throws -> [String: FeedReader] {
        var feeds: [String: FeedReader] = [:]
        var texts: [String: [UInt8]] = [:]
        defer { try? validate(texts) }
        var queue = ["/opds"]
        while let target = queue.popLast() {
            guard feeds[target] == nil else { continue }
            let reply = try server.get(target)
            XCTAssertEqual(reply.status, 200, target)
            XCTAssertTrue(reply.headers["content-type"]?.hasPrefix("application/atom+xml;profile=opds-catalog") ?? false, target)
            guard let feed = FeedReader(reply.body) else { XCTFail("\(target) is no Atom feed:\n\(reply.text)"); continue }
            texts[target] = reply.body
            feeds[target] = feed
            let links = feed.links.filter { $0.rel == "next" } + feed.entries.flatMap(\.links).filter { $0.rel == "subsection" }
            queue += links.map(\.href).filter { feeds[$0] == nil }
        }
        return feeds
    }

    /// jing against the OPDS 1.2 RelaxNG, every feed in one run (the JVM starts once). OPDS-PSE's
    /// href is a URI template (`{pageNumber}`), which no URI pattern admits: its variables are
    /// filled as a client fills them first.
    private func validate(_ feeds: [String: [UInt8]]) throws {
        let folder = ArchiveMaker.temporaryDirectory("feeds")
        var files: [String: String] = [:]
        for (number, (target, bytes)) in feeds.enumerated() {
            let file = folder.appendingPathComponent("feed-\(number).xml")
            let filled = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "{pageNumber}", with: "0")
                .replacingOccurrences(of: "{maxWidth}", with: "600")
            try filled.write(to: file, atomically: true, encoding: .utf8)
            files[file.path] = target
        }
        let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Schemas/opds.rnc")
        let result = try CommandRunner.capture("/usr/bin/jing", ["-c", schema.path] + files.keys.sorted())
        XCTAssertEqual(result.status, 0, "feeds not valid OPDS 1.2 (\(files)):\n\(result.stdout)")
    }

    func testEveryFeedIsValidOPDSAndTheCatalogMirrorsTheMount() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jing") else { throw XCTSkip("jing is not installed (scripts/setup)") }
        let feeds = try crawl()
        let root = try XCTUnwrap(feeds["/opds"])
        XCTAssertEqual(root.entries.map(\.title), ["Folders", "Continue Reading", "By Series", "By Publisher", "Story Arcs",
                                                    "Reading Lists", "Recently Added"])
        let folders = try XCTUnwrap(feeds["/opds/folders"])
        XCTAssertEqual(folders.entries.map(\.title), ["Broken", "Loose Sketches", "Moon Tales", "Real", "Space Patrol"])
        let moon = try XCTUnwrap(feeds["/opds/folders?path=Moon%20Tales"])
        XCTAssertEqual(moon.entries.map(\.title), ["Moon Tales #1", "Moon Tales #2"])
        let series = try XCTUnwrap(feeds["/opds/view?kind=series"])
        XCTAssertTrue(series.entries.map(\.title).contains("Space Patrol"), "\(series.entries.map(\.title))")
        // A comic that cannot be read is an entry saying why, with nothing to download.
        let broken = try XCTUnwrap(feeds["/opds/folders?path=Broken"])
        let truncated = try XCTUnwrap(broken.entries.first { $0.title == "Truncated Issue" })
        XCTAssertTrue(truncated.content.contains("cannot show this comic"), truncated.content)
        XCTAssertNil(truncated.link("http://opds-spec.org/acquisition"))
        XCTAssertGreaterThanOrEqual(feeds.count, 15, "\(feeds.keys.sorted())")
    }

    /// Each readable comic: its CBZ passes `unzip -t` (and `7zz t`), holds the pages the library
    /// core gives, byte for byte, and is as long as its Content-Length and the feed's `length`.
    func testEveryComicDownloadsAsACBZWithTheLibraryCoresPages() throws {
        let pool = WorkerPool(WorkerPool.Configuration(executable: CommandRunner.workerBinary.path, maxWorkers: 2, timeout: 20))
        defer { pool.shutdown() }
        let core = LibraryReader(library: LibraryFilesystem(library: server.library.path, options: MountOptions(), backend: pool))
        var downloaded = 0
        for (folder, _) in [("Moon Tales", 2), ("Space Patrol", 2), ("Real", 3), ("Broken", 1), ("", 1)] {
            let feed = try XCTUnwrap(FeedReader(try server.get("/opds/folders" + (folder.isEmpty ? "" : "?path=" + folder.replacingOccurrences(of: " ", with: "%20"))).body))
            for entry in feed.entries {
                guard let link = entry.link("http://opds-spec.org/acquisition") else { continue }
                let reply = try server.get(link.href)
                XCTAssertEqual(reply.status, 200, entry.title)
                XCTAssertEqual(reply.headers["content-length"], String(reply.body.count), entry.title)
                if let length = link.attributes["length"] { XCTAssertEqual(length, String(reply.body.count), entry.title) }
                let file = ArchiveMaker.temporaryDirectory("cbz").appendingPathComponent("comic.cbz")
                try Data(reply.body).write(to: file)
                XCTAssertEqual(try CommandRunner.capture("/usr/bin/unzip", ["-tq", file.path]).status, 0, "unzip -t \(entry.title)")
                if FileManager.default.isExecutableFile(atPath: "/usr/bin/7zz") {
                    XCTAssertEqual(try CommandRunner.capture("/usr/bin/7zz", ["t", file.path]).status, 0, "7zz t \(entry.title)")
                }
                let path = try XCTUnwrap(URLComponents(string: link.href)?.queryItems?.first { $0.name == "path" }?.value)
                let comic = try XCTUnwrap(core.comic(at: path), path)
                let description = try core.describe(comic).get()
                XCTAssertFalse(description.pages.isEmpty, path)
                for (index, name) in description.pages.enumerated() {
                    let served = try CommandRunner.captureBytes("/usr/bin/unzip", ["-p", file.path, name]).stdout
                    let expected = try awaitPage(core, comic, index)
                    XCTAssertEqual(served.count, expected.count, "\(path) \(name)")
                    XCTAssertTrue(served == expected, "\(path) \(name): the CBZ's page differs from the library core's")
                }
                downloaded += 1
            }
        }
        // Moon Tales (7z, tar), Space Patrol (ZIP), Real (RAR4: two readable), Really A Zip, Loose Sketches (a folder).
        XCTAssertEqual(downloaded, 8)
    }

    private func awaitPage(_ reader: LibraryReader, _ comic: ComicRef, _ index: Int) throws -> [UInt8] {
        let done = DispatchSemaphore(value: 0)
        let box = LockedBox<Result<LibraryReader.PageImage, Errno>?>(nil)
        reader.page(comic, index: index) { result in
            box.value = result
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        return try XCTUnwrap(box.value).get().bytes
    }
}

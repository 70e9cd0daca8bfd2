import Foundation
import InkyTestSupport
import XCTest

/// One server over a made library: a CBZ whose pages are WebP, JPEG and PNG, a link out of the
/// library and a plain file beside it. Ranges and validators, page streaming, hostile requests.
final class ServeRequestTests: XCTestCase {
    nonisolated(unsafe) static var served: ServedLibrary?
    /// Why the class's server did not start: each test fails with it (never a silent skip).
    nonisolated(unsafe) static var failure: (any Error)?
    var server: ServedLibrary { Self.served! }
    static let comic = "/opds/comic/cbz?path=Mixed/Mixed%2001.cbz"
    static let pages = "/opds/comic/page?path=Mixed/Mixed%2001.cbz"

    override class func setUp() {
        super.setUp()
        let library = ArchiveMaker.temporaryDirectory("serve-mixed", removedAtExit: true).appendingPathComponent("Library")
        do {
            try FileManager.default.createDirectory(at: library.appendingPathComponent("Mixed"), withIntermediateDirectories: true)
            try ArchiveMaker.zip(at: library.appendingPathComponent("Mixed/Mixed 01.cbz"), members: [
                ("001.webp", try PageImages.make(.webp, width: 1200, height: 1800)),
                ("002.jpg", try PageImages.make(.jpeg, width: 1200, height: 1800)),
                ("003.png", try PageImages.make(.png, width: 800, height: 1200)),
            ])
            try "not a comic".write(to: library.appendingPathComponent("Mixed/notes.txt"), atomically: true, encoding: .utf8)
            // A name that is markup: shown as text in feeds and pages, never as markup.
            try ArchiveMaker.zip(at: library.appendingPathComponent("Mixed/<b>Bold & \"Quoted\"<b>.cbz"),
                                 members: [("001.jpg", try PageImages.make(.jpeg, width: 60, height: 90))])
            try FileManager.default.createSymbolicLink(atPath: library.appendingPathComponent("Mixed/Outside.cbz").path,
                                                       withDestinationPath: "/etc/passwd")
            // 120 comics in one folder: three pages of a feed.
            let many = library.appendingPathComponent("Many")
            try FileManager.default.createDirectory(at: many, withIntermediateDirectories: true)
            let page = many.appendingPathComponent("page.jpg")
            try Data(try PageImages.make(.jpeg, width: 30, height: 45)).write(to: page)
            try ArchiveMaker.python("""
                import sys, zipfile
                for number in range(1, 121):
                    with zipfile.ZipFile("%s/Issue %d.cbz" % (sys.argv[1], number), "w") as comic:
                        comic.write(sys.argv[2], "001.jpg")
                """, arguments: [many.path, page.path])
            try FileManager.default.removeItem(at: page)
            served = try ServedLibrary(library: library)
        } catch {
            failure = error
        }
    }

    override class func tearDown() {
        _ = served?.stop()
        served = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        if let failure = Self.failure { throw failure }
    }

    /// 50 entries a page, in the folder's natural order, `next` to the last page and `previous` back.
    func testAFeedOfManyComicsIsPagedWithNextLinks() throws {
        var titles: [String] = []
        var target: String? = "/opds/folders?path=Many"
        var pages = 0
        while let current = target {
            let feed = try XCTUnwrap(FeedReader(try server.get(current).body), current)
            titles += feed.entries.map(\.title)
            pages += 1
            XCTAssertEqual(feed.link("first")?.href, "/opds/folders?path=Many")
            XCTAssertEqual(feed.link("last")?.href, "/opds/folders?path=Many&page=3")
            if pages > 1 { XCTAssertNotNil(feed.link("previous"), current) }
            target = feed.link("next")?.href
            XCTAssertLessThanOrEqual(pages, 3)
        }
        XCTAssertEqual(pages, 3)
        // `Many/Issue 7.cbz` says no series of its own: its folder gives it.
        XCTAssertEqual(titles, (1...120).map { "Many #\($0)" })
        // A page past the last is the last.
        XCTAssertEqual(try XCTUnwrap(FeedReader(try server.get("/opds/folders?path=Many&page=9").body)).entries.count, 20)
    }

    func testRangesAreExactAndValidatorsAnswer() throws {
        let whole = try server.get(Self.comic)
        XCTAssertEqual(whole.status, 200)
        let size = whole.body.count
        XCTAssertEqual(whole.headers["content-length"], String(size))
        XCTAssertEqual(whole.headers["accept-ranges"], "bytes")
        let tag = try XCTUnwrap(whole.headers["etag"])
        XCTAssertNotNil(whole.headers["last-modified"])
        for (range, expected) in [("bytes=0-0", 0...0), ("bytes=10-19", 10...19), ("bytes=-5", (size - 5)...(size - 1)),
                                  ("bytes=\(size - 3)-", (size - 3)...(size - 1)), ("bytes=100-\(size + 1000)", 100...(size - 1))] {
            let part = try server.get(Self.comic, headers: ["Range: \(range)"])
            XCTAssertEqual(part.status, 206, range)
            XCTAssertEqual(part.headers["content-range"], "bytes \(expected.lowerBound)-\(expected.upperBound)/\(size)", range)
            XCTAssertEqual(part.body, Array(whole.body[expected]), range)
        }
        let past = try server.get(Self.comic, headers: ["Range: bytes=\(size)-"])
        XCTAssertEqual(past.status, 416)
        XCTAssertEqual(past.headers["content-range"], "bytes */\(size)")
        XCTAssertEqual(try server.get(Self.comic, headers: ["Range: bytes=0-1,5-6"]).status, 200, "several ranges: the whole")
        XCTAssertEqual(try server.get(Self.comic, headers: ["If-None-Match: \(tag)"]).status, 304)
        XCTAssertEqual(try server.get(Self.comic, headers: ["If-None-Match: \"other\""]).status, 200)
        let stale = try server.get(Self.comic, headers: ["Range: bytes=0-9", "If-Range: \"older\""])
        XCTAssertEqual(stale.status, 200, "If-Range of another version: all of it")
        XCTAssertEqual(stale.body.count, size)
        let head = try server.get(Self.comic, method: "HEAD")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["content-length"], String(size))
    }

    /// OPDS-PSE numbers pages from 0. A WebP page comes as JPEG; `width` fits the page; the
    /// template's own `{maxWidth}` left in is no fit. A streamed page counts as reading.
    func testStreamedPagesDecodeFitTheWidthAndCountAsReading() throws {
        let cases: [(query: String, format: String, width: Int)] = [
            ("&page=0", "JPEG", 1200), ("&page=0&width=300", "JPEG", 300), ("&page=1&width={maxWidth}", "JPEG", 1200),
            ("&page=1&width=600", "JPEG", 600), ("&page=2&width=400", "PNG", 400),
        ]
        for one in cases {
            if one.query.hasPrefix("&page=2") {
                // Before the last page: in progress, standing on page 1 (the last one streamed).
                let folder = try XCTUnwrap(FeedReader(try server.get("/opds/folders?path=Mixed").body))
                let stream = try XCTUnwrap(folder.entries.first { $0.title == "Mixed #1" }?.link("http://vaemendis.net/opds-pse/stream"))
                XCTAssertEqual(stream.attributes["pse:count"], "3")
                XCTAssertEqual(stream.attributes["pse:lastRead"], "1")
                XCTAssertNotNil(stream.attributes["pse:lastReadDate"])
                XCTAssertEqual(try XCTUnwrap(FeedReader(try server.get("/opds/continue").body)).entries.map(\.title), ["Mixed #1"])
            }
            let reply = try server.get(Self.pages + one.query)
            XCTAssertEqual(reply.status, 200, one.query)
            XCTAssertEqual(reply.headers["content-type"], one.format == "PNG" ? "image/png" : "image/jpeg", one.query)
            let image = try PageImages.inspect(reply.body)
            XCTAssertEqual(image.format, one.format, one.query)
            XCTAssertEqual(image.width, one.width, one.query)
        }
        // The last page read: finished, so no longer in Continue Reading (the mount's rule).
        XCTAssertEqual(try XCTUnwrap(FeedReader(try server.get("/opds/continue").body)).entries.count, 0)
        XCTAssertEqual(try server.get(Self.pages + "&page=3").status, 404)
        XCTAssertEqual(try server.get(Self.pages + "&page=-1").status, 400)
        XCTAssertEqual(try server.get(Self.pages).status, 400)
    }

    /// Nothing outside what the library shows is reachable, every bad request gets a 4xx, and
    /// after a burst of junk the server still answers.
    func testHostileRequestsGetTheirStatusAndNeverBringTheServerDown() throws {
        let refused: [(String, Int)] = [
            ("/opds/comic/cbz?path=Mixed/Nothing.cbz", 404), ("/opds/comic/cbz?path=../../etc/passwd", 404),
            ("/opds/comic/cbz?path=Mixed/../Mixed/Mixed%2001.cbz", 404), ("/opds/comic/cbz?path=/etc/passwd", 404),
            ("/opds/comic/cbz?path=Mixed/Outside.cbz", 404), ("/opds/comic/cbz?path=Mixed/notes.txt", 404),
            ("/opds/comic/cbz?path=Mixed%2F..%2F..%2Fetc%2Fpasswd", 404), ("/opds/comic/cbz?path=Mixed/Mixed%2001.cbz%00", 404),
            ("/opds/folders?path=..", 404), ("/opds/folders?path=Mixed/..", 404), ("/opds/folders?path=Mixed/Mixed%2001.cbz", 404),
            ("/opds/../../../../etc/passwd", 404), ("/opds/comic/cover?path=../Library/Mixed/Mixed%2001.cbz", 404),
            ("/opds/view?kind=nothing", 404), ("/opds/view?kind=series&folder=No%20Such", 404), ("/opds/search", 400),
            ("/opds/comic/page?path=Mixed/Mixed%2001.cbz&page=99999999999999999999", 400), ("/nothing", 404),
            ("/read?path=../Library/Mixed/Mixed%2001.cbz", 404), ("/read?path=Mixed/notes.txt", 404), ("/browse?path=..", 404),
            ("/browse?path=Mixed/Outside.cbz", 404),
        ]
        for (target, status) in refused {
            XCTAssertEqual(try server.get(target).status, status, target)
        }
        // A served path asked with a method it does not take: 405 and what it takes; a path
        // not served is a 404 whatever the method.
        for (method, target, allow) in [("DELETE", "/opds", "GET, HEAD"), ("POST", "/opds/comic/page?path=x", "GET, HEAD"),
                                        ("PUT", "/", "GET, HEAD"), ("GET", "/users/create", "POST"),
                                        ("POST", "/syncs/progress/abc", "GET, HEAD"), ("DELETE", "/nothing", nil)] {
            let reply = try server.get(target, method: method)
            XCTAssertEqual(reply.status, allow == nil ? 404 : 405, "\(method) \(target)")
            XCTAssertEqual(reply.headers["allow"], allow, "\(method) \(target)")
        }
        for target in ["/browse?path=Mixed", "/opds/folders?path=Mixed"] {
            let listing = try server.get(target).text
            XCTAssertFalse(listing.contains("<b>Bold"), "\(target) shows a name as markup:\n\(listing)")
            XCTAssertTrue(listing.contains("&lt;b&gt;Bold &amp; &quot;Quoted&quot;&lt;b&gt;"), "\(target):\n\(listing)")
        }
        let huge = try server.get("/opds", headers: ["X-Junk: " + String(repeating: "a", count: 100_000)])
        XCTAssertTrue((400..<500).contains(huge.status) || huge.status == 0, "a 100 kB header: \(huge.status)")
        // Junk on raw sockets: not HTTP, a request line of 64 kB, a body length that lies, a
        // connection closed mid-request; 200 of them, then a good request.
        let burst = """
            import socket
            junk = [b"\\x00\\xff garbage\\r\\n\\r\\n", b"GET /" + b"a" * 65536 + b" HTTP/1.1\\r\\n\\r\\n",
                    b"POST /opds HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 99999999\\r\\n\\r\\nshort",
                    b"GET /opds HTTP/1.1\\r\\nHost: x\\r\\nRange: bytes=", b"GET /opds/comic/cbz?path=%ZZ HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"]
            for i in range(200):
                s = socket.create_connection(("127.0.0.1", \(URL(string: server.base)!.port!)), timeout=5)
                s.sendall(junk[i % len(junk)])
                s.close()
            """
        _ = try ArchiveMaker.run("/usr/bin/python3", ["-c", burst])
        XCTAssertEqual(try server.get("/opds").status, 200, "the server answers after the burst:\n\(server.logText)")
        XCTAssertTrue(server.process.isRunning)
    }
}

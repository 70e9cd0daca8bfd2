import Foundation
import InkyCore
import InkyLibrary
import InkyTestSupport
import InkyWorker
import XCTest

/// What every served library is checked for: its feeds crawled and valid, its comics' CBZs
/// whole and holding the library core's pages.
extension ServedLibrary {
    /// Every feed reachable from /opds by navigation and `next` links, by target, each checked
    /// to be an Atom feed of OPDS's media type, then all validated by jing at once.
    func crawl(file: StaticString = #filePath, line: UInt = #line) throws -> [String: FeedReader] {
        var feeds: [String: FeedReader] = [:]
        var texts: [String: [UInt8]] = [:]
        var queue = ["/opds"]
        while let target = queue.popLast() {
            guard feeds[target] == nil else { continue }
            let reply = try get(target)
            XCTAssertEqual(reply.status, 200, target, file: file, line: line)
            XCTAssertTrue(reply.headers["content-type"]?.hasPrefix("application/atom+xml;profile=opds-catalog") ?? false, target,
                          file: file, line: line)
            guard let feed = FeedReader(reply.body) else {
                XCTFail("\(target) is no Atom feed:\n\(reply.text)", file: file, line: line)
                continue
            }
            feeds[target] = feed
            texts[target] = reply.body
            let links = feed.links.filter { $0.rel == "next" } + feed.entries.flatMap(\.links).filter { $0.rel == "subsection" }
            queue += links.map(\.href).filter { feeds[$0] == nil }
        }
        try Self.validate(texts, file: file, line: line)
        return feeds
    }

    /// jing against the OPDS 1.2 RelaxNG, every feed in one run (the JVM starts once). OPDS-PSE's
    /// href is a URI template (`{pageNumber}`), which no URI pattern admits: its variables are
    /// filled as a client fills them first.
    static func validate(_ feeds: [String: [UInt8]], file: StaticString, line: UInt) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jing") else { throw XCTSkip("jing is not installed (scripts/setup)") }
        let folder = ArchiveMaker.temporaryDirectory("feeds", removedAtExit: true)
        var files: [String: String] = [:]
        for (number, (target, bytes)) in feeds.enumerated() {
            let path = folder.appendingPathComponent("feed-\(number).xml")
            let filled = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "{pageNumber}", with: "0")
                .replacingOccurrences(of: "{maxWidth}", with: "600")
            try filled.write(to: path, atomically: true, encoding: .utf8)
            files[path.path] = target
        }
        let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Schemas/opds.rnc")
        let result = try CommandRunner.capture("/usr/bin/jing", ["-c", schema.path] + files.keys.sorted())
        XCTAssertEqual(result.status, 0, "feeds not valid OPDS 1.2 (\(files)):\n\(result.stdout)", file: file, line: line)
    }

    /// Downloads each comic the folder feeds offer: its CBZ passes `unzip -t` (and `7zz t`), is as
    /// long as its Content-Length and the feed's `length`, and holds the pages the library core
    /// gives (InkyLibrary over a worker pool of its own), byte for byte. Returns the paths downloaded.
    func checkEveryDownload(_ feeds: [String: FeedReader], file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let pool = WorkerPool(WorkerPool.Configuration(executable: CommandRunner.workerBinary.path, maxWorkers: 2, timeout: 20))
        defer { pool.shutdown() }
        let core = LibraryReader(library: LibraryFilesystem(library: library.path, options: MountOptions(), backend: pool))
        var downloaded: [String] = []
        let entries = feeds.filter { $0.key.hasPrefix("/opds/folders") }.values.flatMap(\.entries)
        for link in entries.compactMap({ $0.link("http://opds-spec.org/acquisition") }) {
            let path = try XCTUnwrap(URLComponents(string: link.href)?.queryItems?.first { $0.name == "path" }?.value)
            let reply = try get(link.href)
            XCTAssertEqual(reply.status, 200, path, file: file, line: line)
            XCTAssertEqual(reply.headers["content-length"], String(reply.body.count), path, file: file, line: line)
            if let length = link.attributes["length"] { XCTAssertEqual(length, String(reply.body.count), path, file: file, line: line) }
            let cbz = ArchiveMaker.temporaryDirectory("cbz", removedAtExit: true).appendingPathComponent("comic.cbz")
            try Data(reply.body).write(to: cbz)
            XCTAssertEqual(try CommandRunner.capture("/usr/bin/unzip", ["-tq", cbz.path]).status, 0, "unzip -t \(path)", file: file, line: line)
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/7zz") {
                XCTAssertEqual(try CommandRunner.capture("/usr/bin/7zz", ["t", cbz.path]).status, 0, "7zz t \(path)", file: file, line: line)
            }
            let comic = try XCTUnwrap(core.comic(at: path), path)
            let description = try core.describe(comic).get()
            XCTAssertFalse(description.pages.isEmpty, path, file: file, line: line)
            for (index, name) in description.pages.enumerated() {
                let served = try CommandRunner.captureBytes("/usr/bin/unzip", ["-p", cbz.path, name]).stdout
                let expected = try Self.page(core, comic, index)
                XCTAssertTrue(served == expected, "\(path) \(name): \(served.count) bytes served, \(expected.count) from the library core",
                              file: file, line: line)
            }
            downloaded.append(path)
        }
        return downloaded.sorted()
    }

    private static func page(_ reader: LibraryReader, _ comic: ComicRef, _ index: Int) throws -> [UInt8] {
        let done = DispatchSemaphore(value: 0)
        let box = LockedBox<Result<LibraryReader.PageImage, Errno>?>(nil)
        reader.page(comic, index: index) { result in
            box.value = result
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        return try XCTUnwrap(box.value).get().bytes
    }
}

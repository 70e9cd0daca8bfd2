import Foundation
import InkyArchive
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyWorker

/// The pool against real worker processes (the built `inkyfs-worker`) and impostors.
final class WorkerPoolTests: XCTestCase {
    private func pool(timeout: Double = 10, executable: String? = nil, arguments: [String] = []) -> WorkerPool {
        WorkerPool(.init(executable: executable ?? CommandRunner.workerBinary.path, arguments: arguments, maxWorkers: 2, timeout: timeout))
    }

    func testListsAndStreamsPagesExactlyAsInProcess() throws {
        let path = Corpus.fixture("Moon Tales/Moon Tales 01.cb7")
        let workers = pool()
        defer { workers.shutdown() }
        let (listing, identity) = try workers.list(path, limits: .default)
        let reader = try ComicOpener.open(path)
        var pagesOnly = listing
        pagesOnly.metadata = nil
        XCTAssertEqual(pagesOnly, reader.listing)
        var pages: [PageSource: [UInt8]] = [:]
        let requests = listing.pages.map { EntryRequest(source: $0.source, size: $0.size, name: $0.sourcePath) }
        try workers.read(path, identity: identity, entries: requests, limits: .default) { index, result in pages[index] = try? result.get() }
        for page in reader.listing.pages { XCTAssertEqual(pages[page.source], try reader.readPage(page)) }
        let info = try workers.comicInfo(Corpus.fixture("Space Patrol/Space Patrol 001.cbz"),
                                         identity: FileIdentity.of(Corpus.fixture("Space Patrol/Space Patrol 001.cbz")).get(), limits: .default)
        XCTAssertTrue(String(decoding: try XCTUnwrap(info), as: UTF8.self).contains("<Series>Space Patrol</Series>"))
    }

    /// Listing reads what the comic says it is: its ComicInfo.xml, else its file name; a
    /// ComicInfo.xml that is not XML (here a bomb's DOCTYPE) is no metadata, and the comic lists.
    func testListingsCarryTheComicsMetadata() throws {
        let workers = pool()
        defer { workers.shutdown() }
        let tagged = try workers.list(Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), limits: .default).0.metadata
        XCTAssertEqual(tagged?.source, .comicInfo)
        XCTAssertEqual(tagged?.series, "Space Patrol")
        let folder = ArchiveMaker.temporaryDirectory("metadata")
        defer { try? FileManager.default.removeItem(at: folder) }
        let bomb = folder.appendingPathComponent("Owls v2 #003 (2013).cbz")
        try ArchiveMaker.zip(at: bomb, members: [
            ("ComicInfo.xml", Array("<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'aaaa'>]><ComicInfo><Series>&a;</Series></ComicInfo>".utf8)),
            ("01.jpg", ArchiveMaker.noise(count: 100, seed: 1))])
        let listing = try workers.list(bomb.path, limits: .default).0
        XCTAssertEqual(listing.pages.count, 1)
        XCTAssertEqual(listing.metadata, ComicMetadata(source: .fileName, series: "Owls", number: "3", volume: 2, year: 2013))
    }

    /// The other formats real comics carry: CoMet.xml (in the archive's folder) and
    /// ComicBookInfo's JSON in a ZIP's comment.
    func testCoMetAndComicBookInfoAreReadWhereThereIsNoComicInfo() throws {
        try Corpus.skipUnlessPresent("real-comics/comicbox/Captain Science #001-comet.cbz")
        let workers = pool()
        defer { workers.shutdown() }
        let coMet = try workers.list(Corpus.path("real-comics/comicbox/Captain Science #001-comet.cbz"), limits: .default).0
        XCTAssertEqual(coMet.metadata, ComicMetadata(source: .coMet, series: "Captain Science", number: "1", volume: 1,
                                                     title: "The Beginning", publisher: "Bell Features", year: 1950, month: 12,
                                                     pageCount: 5, language: "English"))
        XCTAssertEqual(coMet.pages.count, 5)
        let folder = ArchiveMaker.temporaryDirectory("metadata")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tagged = folder.appendingPathComponent("hb3.cbz")
        try ArchiveMaker.python("""
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w") as z:
                z.writestr("01.jpg", b"x" * 100)
                z.comment = b'{"appID":"ComicTagger/1.0","ComicBookInfo/1.0":{"series":"Hellboy","issue":"3","publicationYear":1994}}'
            """, arguments: [tagged.path])
        let info = try workers.list(tagged.path, limits: .default).0.metadata
        XCTAssertEqual(info, ComicMetadata(source: .comicBookInfo, series: "Hellboy", number: "3", year: 1994))
    }

    func testAChangedFileIsRefusedInsteadOfServedStale() throws {
        let workers = pool()
        defer { workers.shutdown() }
        let path = Corpus.fixture("Space Patrol/Space Patrol 001.cbz")
        let (listing, identity) = try workers.list(path, limits: .default)
        var stale = identity
        stale.modifiedNanoseconds += 1
        let page = listing.pages[0]
        XCTAssertThrowsError(try workers.read(path, identity: stale, entries: [EntryRequest(source: page.source, size: page.size, name: page.name)],
                                              limits: .default) { _, _ in }) { error in
            guard case ComicError.io(_, let code, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(code, ESTALE)
        }
    }

    func testImpostorsAreStoppedWithTypedErrors() throws {
        // A file the pool can open and pass on: what follows is the impostor's doing.
        let folder = ArchiveMaker.temporaryDirectory("impostors")
        defer { try? FileManager.default.removeItem(at: folder) }
        let comic = folder.appendingPathComponent("x.cbz").path
        XCTAssertTrue(FileManager.default.createFile(atPath: comic, contents: Data("PK".utf8)))
        let garbage = pool(executable: "/bin/sh", arguments: ["-c", "head -c 64 /dev/urandom >&3; exec sleep 30"])
        XCTAssertThrowsError(try garbage.list(comic, limits: .default)) { error in
            XCTAssertEqual(error as? ComicError, .parserFailed(path: comic, detail: "the worker sent garbage and was stopped"))
        }
        let silent = pool(timeout: 1, executable: "/bin/sh", arguments: ["-c", "exec sleep 600"])
        let started = Date()
        XCTAssertThrowsError(try silent.list(comic, limits: .default)) { error in
            XCTAssertEqual(error as? ComicError, .parserFailed(path: comic, detail: "timed out: the archive parser made no progress for 1 s"))
        }
        // The 1 s timeout ended it, not the worker's own end 600 s later: a bound on a hang, generous.
        XCTAssertLessThan(Date().timeIntervalSince(started), 120)
        let dying = pool(executable: "/bin/sh", arguments: ["-c", "kill -SEGV $$"])
        XCTAssertThrowsError(try dying.list(comic, limits: .default)) { error in
            XCTAssertEqual(error as? ComicError, .parserFailed(path: comic, detail: "the worker crashed (signal 11)"))
        }
    }
}

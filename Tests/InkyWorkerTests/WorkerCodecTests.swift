import Foundation
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyWorker

/// The worker protocol's binary messages: each survives a round trip through a real frame
/// channel, and anything a subverted worker could send that is not exactly such a message is
/// refused (nil), never trapped on.
final class WorkerCodecTests: XCTestCase {
    private let limits = ComicLimits(maxPages: 77, maxPageBytes: 5 << 20, maxComicBytes: 1 << 40, maxCompressionRatio: 9,
                                     ratioCheckAfterBytes: 4096, maxNameBytes: 300, maxEntries: 1234, maxHeaderErrors: 3,
                                     rendering: PageRendering(height: 1600, dpi: 150, conversion: PageConversion(
                                         format: .jpeg, fitWidth: 1072, fitHeight: 1448, grayscale: true, splitSpreads: true,
                                         rightToLeft: true, cropMargins: true, strips: true)))
    private let identity = FileIdentity(size: 123_456, modifiedNanoseconds: -5, inode: .max)

    private var listing: ComicListing {
        var listing = ComicListing(format: .zip, pages: [
            Page(number: 0, name: "001.jpg", sourcePath: "Ünï/1.jpg", entryIndex: 3, size: 4, storedData: StoredData(offset: 99, crc32: .max)),
            Page(number: 1, name: "002.png", sourcePath: "2.webp", entryIndex: 7, size: Page.sizeAfterRendering),
            Page(number: 2, name: "003-2.jpg", sourcePath: "3.jpg", entryIndex: 8, piece: PagePiece(cut: .spread, part: 1, count: 2),
                 size: Page.sizeAfterRendering)],
            comicInfo: ArchiveEntry(index: 1, path: "ComicInfo.xml", kind: .file, declaredSize: 80, isEncrypted: false),
            skipped: [SkippedEntry(path: "notes.txt", reason: .notAnImage), SkippedEntry(path: "big.jpg", reason: .tooLarge(1 << 33))],
            isSolid: true, rendering: limits.rendering)
        listing.pages[0].learnedCRC32 = 42
        listing.metadata = ComicMetadata(source: .comicInfo, series: "Space Patrol", number: "1", volume: 2, title: "Début",
                                         publisher: "P", year: 1950, month: 12, arcs: [.init(name: "Arc", number: "2"), .init(name: "B")],
                                         pageCount: 2, language: "en", manga: "No")
        return listing
    }

    private var errors: [ComicError] {
        [.notAComicArchive(path: "a"), .unsupportedFormat(path: "a", format: "ACE"), .corrupted(path: "a", detail: "bad"),
         .encrypted(path: "a"), .noPages(path: "a"), .pageTooLarge(path: "a", entry: "1.jpg", limit: 1 << 27),
         .limitExceeded(path: "a", detail: "pages"), .io(path: "a", errno: -ENOENT, detail: "gone"), .parserFailed(path: "a", detail: "x")]
    }

    private var binaryReplies: [WorkerReply] {
        var bare = listing
        bare.metadata = nil
        return [.listing(WireListing(listing), identity: identity), .listing(WireListing(bare), identity: identity), .progress, .done]
            + errors.map { .failure($0) }
    }

    /// A frame's payload after checking its header says binary and the right length.
    private func payload(_ frame: [UInt8]) throws -> [UInt8] {
        let header = try XCTUnwrap(WorkerFrame.parseHeader(Array(frame.prefix(5))))
        XCTAssertEqual(header.kind, WorkerFrame.binaryKind)
        XCTAssertEqual(header.length, frame.count - 5)
        return Array(frame.dropFirst(5))
    }

    func testEveryBinaryMessageRoundTripsThroughAFrameChannel() throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        let sender = FrameChannel(fd: pair[0]), receiver = FrameChannel(fd: pair[1])
        let request = WorkerRequest.list(path: "/library/Ünïcode #1.cbz", limits: limits)
        try sender.send(WorkerCodec.frame(request))
        guard case .binary(let bytes) = try receiver.receive(timeout: 5) else { return XCTFail("not a binary frame") }
        XCTAssertEqual(WorkerCodec.request(binary: bytes), request)
        for reply in binaryReplies {
            try sender.send(WorkerCodec.frame(reply))
            var decoded: WorkerReply?
            try receiver.receive(timeout: 5) { frame in
                if case .binary(let bytes) = frame { decoded = WorkerCodec.reply(binary: bytes) }
            }
            XCTAssertEqual(decoded, reply)
        }
        XCTAssertEqual(WorkerCodec.request(binary: try payload(WorkerCodec.frame(.list(path: "", limits: .default)))),
                       .list(path: "", limits: .default))
    }

    /// The page replies and the other requests stay JSON; a binary-coded message sent as JSON
    /// is refused, so each has one wire form (and a listing has no JSON form at all).
    func testTheReadPathStaysJSONAndEachMessageHasOneWireForm() throws {
        let jsonReplies: [WorkerReply] = [.pageStart(PageSource(entry: 3), size: 10), .pageEnd(PageSource(entry: 3)),
                                          .pageFailed(PageSource(entry: 3), .corrupted(path: "a", detail: "b"))]
        for reply in jsonReplies {
            let frame = WorkerCodec.frame(reply)
            XCTAssertEqual(WorkerFrame.parseHeader(Array(frame.prefix(5)))?.kind, 1)
            XCTAssertEqual(WorkerCodec.reply(json: Data(frame.dropFirst(5))), reply)
        }
        let read = WorkerRequest.read(path: "a", identity: identity, entries: [EntryRequest(source: PageSource(entry: 1), size: 2, name: "n")], limits: limits)
        XCTAssertEqual(WorkerCodec.request(json: Data(WorkerCodec.frame(read).dropFirst(5))), read)
        for json in [#"{"progress":{}}"#, #"{"done":{}}"#, #"{"failure":{"_0":{"noPages":{"path":"x"}}}}"#,
                     #"{"listing":{"_0":{"l":"BA==","m":null},"identity":{"inode":1,"size":2,"modifiedNanoseconds":3}}}"#] {
            XCTAssertNil(WorkerCodec.reply(json: Data(json.utf8)), json)
        }
        XCTAssertNil(WorkerCodec.request(json: Data(WorkerFrame.encode(WorkerRequest.list(path: "a", limits: limits)).dropFirst(5))))
    }

    func testEveryTruncationAndEveryTrailingByteIsRefused() throws {
        let messages = try binaryReplies.map { try payload(WorkerCodec.frame($0)) }
        for bytes in messages {
            for end in 0..<bytes.count { XCTAssertNil(WorkerCodec.reply(binary: Array(bytes[..<end])), "cut at \(end) of \(bytes.count)") }
            XCTAssertNil(WorkerCodec.reply(binary: bytes + [0]), "a trailing byte")
        }
        let request = try payload(WorkerCodec.frame(.list(path: "/a.cbz", limits: limits)))
        for end in 0..<request.count { XCTAssertNil(WorkerCodec.request(binary: Array(request[..<end]))) }
        XCTAssertNil(WorkerCodec.request(binary: request + [0]))
    }

    func testUnknownTagsBadTextAndHugeOrOverflowingNumbersAreRefused() throws {
        for tag: UInt8 in [0, 5, 0x80, 0xFF] { XCTAssertNil(WorkerCodec.reply(binary: [tag]), "reply tag \(tag)") }
        for tag: UInt8 in [0, 2, 0xFF] { XCTAssertNil(WorkerCodec.request(binary: [tag, 0] + Array(repeating: 0, count: 80))) }
        func failure(_ build: (inout BinaryWriter) -> Void) -> [UInt8] {
            var out = BinaryWriter()
            out.byte(2)
            build(&out)
            return out.bytes
        }
        XCTAssertEqual(WorkerCodec.reply(binary: failure { $0.byte(4); $0.string("ok") }), .failure(.noPages(path: "ok")), "the control")
        XCTAssertNil(WorkerCodec.reply(binary: failure { $0.byte(9); $0.string("a") }), "unknown error tag")
        XCTAssertNil(WorkerCodec.reply(binary: failure { $0.byte(4); $0.varint(2); $0.byte(0xC3); $0.byte(0x28) }), "bad UTF-8")
        XCTAssertNil(WorkerCodec.reply(binary: failure { $0.byte(4); $0.varint(1); $0.byte(0xFF) }), "bad UTF-8")
        XCTAssertNil(WorkerCodec.reply(binary: failure { $0.byte(4); $0.varint(UInt64.max >> 1); $0.byte(0x41) }), "a huge length")
        XCTAssertNil(WorkerCodec.reply(binary: failure { $0.byte(4); $0.bytes += Array(repeating: 0xFF, count: 11) }), "a varint too long")
        let long = String(repeating: "a", count: WorkerCodec.maxText + 1)
        XCTAssertNil(WorkerCodec.reply(binary: failure { $0.byte(4); $0.string(long) }), "text over maxText")
        XCTAssertNil(WorkerCodec.reply(binary: failure { $0.byte(7); $0.string("a"); $0.signed(Int64(Int32.max) + 1); $0.string("d") }),
                     "an errno over Int32")
        // A listing whose rendering height does not fit an Int (the decoder once trapped on it).
        var listingBytes = try payload(WorkerCodec.frame(.listing(WireListing(ComicListing(format: .pdf, pages: [], comicInfo: nil, skipped: [], isSolid: false,
                                       rendering: PageRendering(height: 1))), identity: identity)))
        let heightAt = 1 + 24 + 1 + 1 + 3 + 1 + 1 // tag, identity, version, "pdf", solid, rendering present
        XCTAssertEqual(listingBytes[heightAt], 1)
        listingBytes.replaceSubrange(heightAt...heightAt, with: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        XCTAssertNil(WorkerCodec.reply(binary: listingBytes))
    }

    func testHostileMetadataIsBoundedAndCleaned() throws {
        func listing(_ metadata: (inout BinaryWriter) -> Void) -> [UInt8] {
            var out = BinaryWriter()
            out.byte(1)
            out.identity(identity)
            ListingCodec.encode(ComicListing(format: .zip, pages: [], comicInfo: nil, skipped: [], isSolid: false), into: &out)
            out.byte(1)
            metadata(&out)
            return out.bytes
        }
        let dirty = ComicMetadata(source: .fileName, series: "  Evil\u{0}\u{202E}  Series ", year: 99_999)
        let cleaned = WorkerCodec.reply(binary: listing { $0.metadata(dirty) })
        guard case .listing(let wire, _)? = cleaned else { return XCTFail("\(String(describing: cleaned))") }
        XCTAssertEqual(wire.listing.metadata, dirty.sanitized())
        XCTAssertEqual(wire.listing.metadata?.series, "Evil Series")
        XCTAssertNil(wire.listing.metadata?.year)
        XCTAssertNil(WorkerCodec.reply(binary: listing { $0.byte(4) }), "unknown source")
        func arcs(_ count: Int) -> [UInt8] {
            listing { out in
                out.byte(0)
                (0..<7).forEach { _ in out.byte(0) } // series ... month absent
                out.varint(UInt64(count))
                (0..<count).forEach { out.string("a\($0)"); out.byte(0) }
                (0..<3).forEach { _ in out.byte(0) } // page count, language, manga absent
            }
        }
        XCTAssertNotNil(WorkerCodec.reply(binary: arcs(ComicMetadata.maxArcs)), "the control")
        XCTAssertNil(WorkerCodec.reply(binary: arcs(ComicMetadata.maxArcs + 1)), "more arcs than any honest worker sends")
        XCTAssertNil(WorkerCodec.reply(binary: listing { $0.byte(0); $0.byte(2) }), "an optional that is neither absent nor present")
    }

    /// An honest worker's over-long text is cut on a character boundary, not refused.
    func testTheEncoderCutsLongTextAtACharacter() throws {
        let detail = String(repeating: "é", count: WorkerCodec.maxText)
        let reply = try XCTUnwrap(WorkerCodec.reply(binary: try payload(WorkerCodec.frame(.failure(.corrupted(path: "p", detail: detail))))))
        guard case .failure(.corrupted("p", let cut)) = reply else { return XCTFail("\(reply)") }
        XCTAssertEqual(cut.utf8.count, WorkerCodec.maxText)
        XCTAssertTrue(detail.hasPrefix(cut))
    }

    /// A worker whose binary reply is malformed is stopped and its comic fails as
    /// `parserFailed`, as for any other garbage.
    func testAWorkerSendingAMalformedBinaryListingIsStopped() throws {
        // A binary frame of 3 bytes: the listing tag, then an identity cut short.
        let pool = WorkerPool(.init(executable: "/bin/sh", arguments: ["-c", #"printf '\003\000\000\000\003\001\000\000' >&3; exec sleep 600"#],
                                    maxWorkers: 1, timeout: 300))
        defer { pool.shutdown() }
        // A file the pool can open and pass on: what follows is the impostor's doing.
        let folder = ArchiveMaker.temporaryDirectory("malformed-listing")
        defer { try? FileManager.default.removeItem(at: folder) }
        let comic = folder.appendingPathComponent("x.cbz").path
        XCTAssertTrue(FileManager.default.createFile(atPath: comic, contents: Data("PK".utf8)))
        let started = Date()
        XCTAssertThrowsError(try pool.list(comic, limits: .default)) { error in
            XCTAssertEqual(error as? ComicError, .parserFailed(path: comic, detail: "the worker sent garbage and was stopped"))
        }
        // Far below the timeout (300 s) and the worker's own end (600 s), however loaded the machine.
        XCTAssertLessThan(Date().timeIntervalSince(started), 120, "stopped at once, not at the timeout")
    }
}

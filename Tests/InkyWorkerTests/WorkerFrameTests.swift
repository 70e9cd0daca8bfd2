import XCTest
@testable import InkyCore
@testable import InkyWorker

final class WorkerFrameTests: XCTestCase {
    func testHeadersRoundTripAndHostileLengthsAreRefused() {
        let header = WorkerFrame.header(length: 1234, kind: 2)
        XCTAssertEqual(WorkerFrame.parseHeader(header)?.length, 1234)
        XCTAssertNil(WorkerFrame.parseHeader(WorkerFrame.header(length: WorkerFrame.maxLength + 1, kind: 1)), "too long")
        for kind: UInt8 in [0, 4, 9] { XCTAssertNil(WorkerFrame.parseHeader([1, 0, 0, 0, kind]), "unknown kind \(kind)") }
        XCTAssertNil(WorkerFrame.parseHeader([1, 0, 0]), "short header")
    }

    func testMessagesEncodeAsJSONFrames() throws {
        let frame = WorkerFrame.encode(WorkerReply.pageStart(PageSource(entry: 3), size: 10))
        let parsed = try XCTUnwrap(WorkerFrame.parseHeader(Array(frame.prefix(5))))
        XCTAssertEqual(parsed.kind, 1)
        XCTAssertEqual(parsed.length, frame.count - 5)
        XCTAssertEqual(try JSONDecoder().decode(WorkerReply.self, from: Data(frame.dropFirst(5))), .pageStart(PageSource(entry: 3), size: 10))
    }

    /// A cut page's piece travels as its own field, in the request and in every reply about it.
    func testAPieceRoundTripsInRequestsAndReplies() throws {
        let strip = PageSource(entry: 70_000, piece: PagePiece(cut: .strip, part: 2, count: 12))
        let half = PageSource(entry: 3, piece: PagePiece(cut: .spread, part: 0, count: 2, rightToLeft: true))
        let request = WorkerRequest.read(path: "c.cbz", identity: FileIdentity(size: 1, modifiedNanoseconds: 2, inode: 3),
                                         entries: [EntryRequest(source: strip, size: -1, name: "a.webp"),
                                                   EntryRequest(source: half, size: 9, name: "b.jpg")], limits: ComicLimits())
        XCTAssertEqual(try decode(WorkerRequest.self, WorkerFrame.encode(request)), request)
        for reply in [WorkerReply.pageStart(strip, size: 5), .pageEnd(half), .pageFailed(strip, .corrupted(path: "c.cbz", detail: "x"))] {
            XCTAssertEqual(try decode(WorkerReply.self, WorkerFrame.encode(reply)), reply)
        }
        let json = String(decoding: WorkerFrame.encode(WorkerReply.pageEnd(strip)).dropFirst(5), as: UTF8.self)
        XCTAssertTrue(json.contains("70000") && json.contains("\"strip\""), json)
    }

    /// A subverted worker naming a piece no listing makes is refused at decoding, before the
    /// pool looks it up.
    func testAHostilePieceIsRefused() throws {
        let good = String(decoding: WorkerFrame.encode(WorkerReply.pageEnd(PageSource(entry: 4, piece: PagePiece(cut: .strip, part: 1, count: 3))))
            .dropFirst(5), as: UTF8.self)
        XCTAssertNoThrow(try JSONDecoder().decode(WorkerReply.self, from: Data(good.utf8)))
        // Each refused by the piece's own check (its words), a cut no listing makes by its type.
        let hostile = [("\"count\":3", "\"count\":1", "piece 1 of 1"), ("\"count\":3", "\"count\":\(PagePiece.maxCount + 1)", "piece 1 of \(PagePiece.maxCount + 1)"),
                       ("\"part\":1", "\"part\":3", "piece 3 of 3"), ("\"part\":1", "\"part\":-1", "piece -1 of 3"), ("\"strip\"", "\"diagonal\"", nil)]
        for (from, to, piece) in hostile {
            XCTAssertTrue(good.contains(from), good)
            XCTAssertThrowsError(try JSONDecoder().decode(WorkerReply.self, from: Data(good.replacingOccurrences(of: from, with: to).utf8)), to) { error in
                guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(to): \(error)") }
                if let piece {
                    XCTAssertEqual(context.debugDescription, "\(piece) is no piece a listing makes", to)
                    XCTAssertEqual(context.codingPath.last?.stringValue, "piece", to)
                } else {
                    XCTAssertEqual(context.codingPath.last?.stringValue, "cut", "\(to): \(context)")
                }
            }
        }
    }

    private func decode<Message: Decodable>(_ type: Message.Type, _ frame: [UInt8]) throws -> Message {
        try JSONDecoder().decode(type, from: Data(frame.dropFirst(5)))
    }

    /// sendData (header + payload in one writev) and the borrowing receive meet on the wire,
    /// for payloads larger than the socket buffer and for messages in between.
    func testDataFramesRoundTripThroughTheBorrowingReceive() throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        let senderFD = pair[0], receiver = FrameChannel(fd: pair[1])
        let payloads: [[UInt8]] = [(0..<(WorkerFrame.chunkSize)).map { UInt8(truncatingIfNeeded: $0 * 7) }, [9, 8, 7],
                                   (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 / 3) }]
        let sent = expectation(description: "sent")
        Thread {
            let sender = FrameChannel(fd: senderFD)
            for payload in payloads {
                try? payload.withUnsafeBytes { try sender.sendData($0) }
                try? sender.send(WorkerFrame.encode(WorkerReply.progress))
            }
            sent.fulfill()
        }.start()
        for payload in payloads {
            var got: [UInt8]?
            try receiver.receive(timeout: 10) { frame in
                if case .data(let bytes) = frame { got = Array(bytes) }
            }
            XCTAssertEqual(got, payload)
            var message: Data?
            try receiver.receive(timeout: 10) { frame in
                if case .message(let json) = frame { message = json }
            }
            XCTAssertEqual(try JSONDecoder().decode(WorkerReply.self, from: XCTUnwrap(message)), .progress)
        }
        wait(for: [sent], timeout: 10)
    }
}

extension PageCollector {
    /// The tests' chunks are arrays; the pool lends the channel's buffer.
    mutating func accept(reply: WorkerReply?, data: [UInt8], deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) -> Bool {
        try data.withUnsafeBytes { raw in Result { () throws(ComicError) in try accept(reply: reply, data: raw, deliver: deliver) } }.get()
    }
}

final class PageCollectorTests: XCTestCase {
    private let left = PageSource(entry: 4, piece: PagePiece(cut: .spread, part: 0, count: 2))
    private let right = PageSource(entry: 4, piece: PagePiece(cut: .spread, part: 1, count: 2))
    private let whole = PageSource(entry: 7)
    private var entries: [EntryRequest] {
        [EntryRequest(source: left, size: 6, name: "a.jpg"), EntryRequest(source: right, size: 3, name: "a.jpg"),
         EntryRequest(source: whole, size: 2, name: "b.jpg")]
    }

    func testCollectsPagesAndFailures() throws {
        var collector = PageCollector(path: "c.cbz", entries: entries)
        var delivered: [PageSource: Result<[UInt8], ComicError>] = [:]
        let deliver = { (source: PageSource, result: Result<[UInt8], ComicError>) in delivered[source] = result }
        XCTAssertFalse(try collector.accept(reply: .pageStart(left, size: 6), data: nil, deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: nil, data: [1, 2, 3], deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: nil, data: [4, 5, 6], deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: .pageEnd(left), data: nil, deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: .pageStart(right, size: 3), data: nil, deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: nil, data: [7, 8, 9], deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: .pageEnd(right), data: nil, deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: .pageFailed(whole, .corrupted(path: "c.cbz", detail: "x")), data: nil, deliver: deliver))
        XCTAssertTrue(try collector.accept(reply: .done, data: nil, deliver: deliver))
        XCTAssertEqual(try delivered[left]?.get(), [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(try delivered[right]?.get(), [7, 8, 9])
        XCTAssertThrowsError(try delivered[whole]?.get()) { error in
            XCTAssertEqual(error as? ComicError, .corrupted(path: "c.cbz", detail: "x"), "the worker's own error, delivered as it came")
        }
    }

    func testASubvertedWorkerCannotPushMoreThanWasAskedFor() {
        var collector = PageCollector(path: "c.cbz", entries: entries)
        let ignore = { (_: PageSource, _: Result<[UInt8], ComicError>) in }
        // Each a protocol violation, which stops the worker: `.parserFailed` saying which.
        let unasked = ComicError.parserFailed(path: "c.cbz", detail: "the worker started an entry it was not asked for")
        let extra = ComicError.parserFailed(path: "c.cbz", detail: "the worker sent data it was not asked for")
        func refused(_ expected: ComicError, _ what: String, line: UInt = #line, _ body: () throws -> Bool) {
            XCTAssertThrowsError(try body(), what, line: line) { XCTAssertEqual($0 as? ComicError, expected, what, line: line) }
        }
        refused(unasked, "unknown entry") { try collector.accept(reply: .pageStart(PageSource(entry: 99), size: 1), data: nil, deliver: ignore) }
        refused(unasked, "the whole of an entry only its pieces were asked of") {
            try collector.accept(reply: .pageStart(PageSource(entry: 4), size: 1), data: nil, deliver: ignore)
        }
        let third = PageSource(entry: 4, piece: PagePiece(cut: .strip, part: 1, count: 3))
        refused(unasked, "a piece not asked for") { try collector.accept(reply: .pageStart(third, size: 1), data: nil, deliver: ignore) }
        refused(unasked, "bigger than promised") { try collector.accept(reply: .pageStart(left, size: 1 << 30), data: nil, deliver: ignore) }
        refused(extra, "data outside a page") { try collector.accept(reply: nil, data: [1], deliver: ignore) }
        _ = try? collector.accept(reply: .pageStart(whole, size: 2), data: nil, deliver: ignore)
        refused(extra, "more bytes than the page has") { try collector.accept(reply: nil, data: [1, 2, 3], deliver: ignore) }
        var ending = PageCollector(path: "c.cbz", entries: entries)
        _ = try? ending.accept(reply: .pageStart(left, size: 0), data: nil, deliver: ignore)
        refused(.parserFailed(path: "c.cbz", detail: "the worker ended an entry with the wrong size"), "ends another piece than it started") {
            try ending.accept(reply: .pageEnd(right), data: nil, deliver: ignore)
        }
    }
}

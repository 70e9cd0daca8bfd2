import XCTest
@testable import InkyCore
@testable import InkyWorker

final class WorkerFrameTests: XCTestCase {
    func testHeadersRoundTripAndHostileLengthsAreRefused() {
        let header = WorkerFrame.header(length: 1234, kind: 2)
        XCTAssertEqual(WorkerFrame.parseHeader(header)?.length, 1234)
        XCTAssertNil(WorkerFrame.parseHeader(WorkerFrame.header(length: WorkerFrame.maxLength + 1, kind: 1)), "too long")
        XCTAssertNil(WorkerFrame.parseHeader([1, 0, 0, 0, 9]), "unknown kind")
        XCTAssertNil(WorkerFrame.parseHeader([1, 0, 0]), "short header")
    }

    func testMessagesEncodeAsJSONFrames() throws {
        let frame = WorkerFrame.encode(WorkerReply.pageStart(entryIndex: 3, size: 10))
        let parsed = try XCTUnwrap(WorkerFrame.parseHeader(Array(frame.prefix(5))))
        XCTAssertEqual(parsed.kind, 1)
        XCTAssertEqual(parsed.length, frame.count - 5)
        XCTAssertEqual(try JSONDecoder().decode(WorkerReply.self, from: Data(frame.dropFirst(5))), .pageStart(entryIndex: 3, size: 10))
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
    mutating func accept(reply: WorkerReply?, data: [UInt8], deliver: (Int, Result<[UInt8], ComicError>) -> Void) throws(ComicError) -> Bool {
        try data.withUnsafeBytes { raw in Result { () throws(ComicError) in try accept(reply: reply, data: raw, deliver: deliver) } }.get()
    }
}

final class PageCollectorTests: XCTestCase {
    private let entries = [EntryRequest(entryIndex: 4, size: 6, name: "a.jpg"), EntryRequest(entryIndex: 7, size: 2, name: "b.jpg")]

    func testCollectsPagesAndFailures() throws {
        var collector = PageCollector(path: "c.cbz", entries: entries)
        var delivered: [Int: Result<[UInt8], ComicError>] = [:]
        let deliver = { (index: Int, result: Result<[UInt8], ComicError>) in delivered[index] = result }
        XCTAssertFalse(try collector.accept(reply: .pageStart(entryIndex: 4, size: 6), data: nil, deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: nil, data: [1, 2, 3], deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: nil, data: [4, 5, 6], deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: .pageEnd(entryIndex: 4), data: nil, deliver: deliver))
        XCTAssertFalse(try collector.accept(reply: .pageFailed(entryIndex: 7, .corrupted(path: "c.cbz", detail: "x")), data: nil, deliver: deliver))
        XCTAssertTrue(try collector.accept(reply: .done, data: nil, deliver: deliver))
        XCTAssertEqual(try delivered[4]?.get(), [1, 2, 3, 4, 5, 6])
        XCTAssertThrowsError(try delivered[7]?.get())
    }

    func testASubvertedWorkerCannotPushMoreThanWasAskedFor() {
        var collector = PageCollector(path: "c.cbz", entries: entries)
        let ignore = { (_: Int, _: Result<[UInt8], ComicError>) in }
        XCTAssertThrowsError(try collector.accept(reply: .pageStart(entryIndex: 99, size: 1), data: nil, deliver: ignore), "unknown entry")
        XCTAssertThrowsError(try collector.accept(reply: .pageStart(entryIndex: 4, size: 1 << 30), data: nil, deliver: ignore), "bigger than promised")
        XCTAssertThrowsError(try collector.accept(reply: nil, data: [1], deliver: ignore), "data outside a page")
        _ = try? collector.accept(reply: .pageStart(entryIndex: 7, size: 2), data: nil, deliver: ignore)
        XCTAssertThrowsError(try collector.accept(reply: nil, data: [1, 2, 3], deliver: ignore), "more bytes than the page has")
    }
}

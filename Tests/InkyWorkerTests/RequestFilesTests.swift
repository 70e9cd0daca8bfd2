import Foundation
import InkyTestSupport
import XCTest
@testable import InkyCore
@testable import InkyWorker

/// The files of a request travel as descriptors (SCM_RIGHTS) beside it: more than one `sendmsg`
/// carries arrive all, in order; the daemon's end keeps none a worker sends; a frame whose names
/// and descriptors disagree is refused with every descriptor closed.
final class RequestFilesTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws { folder = ArchiveMaker.temporaryDirectory("request-files") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    /// `count` files of their own (each its own inode), opened read-only.
    private func openFiles(_ count: Int) throws -> [Int32] {
        try (0..<count).map { index in
            let path = folder.appendingPathComponent("f\(index)").path
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data([UInt8(index & 0xFF)])))
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw POSIXError(.EBADF) }
            return fd
        }
    }

    private func inode(_ fd: Int32) -> UInt64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? UInt64(info.st_ino) : 0
    }

    private func channels(workerAccepts: Bool = true) -> (daemon: FrameChannel, worker: FrameChannel) {
        var pair: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair), 0)
        return (FrameChannel(fd: pair[0]), FrameChannel(fd: pair[1], acceptsDescriptors: workerAccepts))
    }

    func testAFolderOfMoreFilesThanOneSendCarriesArrivesWholeAndInOrder() throws {
        let count = FrameChannel.descriptorsPerSend + 60
        let sent = try openFiles(count) // owned by `files` below, which closes them
        var entries = [RequestFiles.Entry(kind: .comic, size: 0, name: "", descriptor: sent[0])]
        entries += sent.dropFirst().enumerated().map { RequestFiles.Entry(kind: .page, size: 1, name: "p\($0.offset).jpg", descriptor: $0.element) }
        let files = RequestFiles(entries: entries)
        let (daemon, worker) = channels()
        let request = WorkerCodec.frame(WorkerRequest.list(path: "/l/folder", limits: .default))
        let payload = files.payload
        // The frames a pool sends (a few KiB: the socket's buffer holds them all before they are read).
        try daemon.send(request + WorkerFrame.header(length: payload.count, kind: 2) + payload, descriptors: files.descriptors)
        guard case .binary = try worker.receive(timeout: 5) else { return XCTFail("the request comes first") }
        var decoded: RequestFiles?
        try worker.receive(timeout: 5) { frame in
            guard case .data(let bytes) = frame else { return }
            decoded = RequestFiles.decode(bytes, descriptors: worker.takeDescriptors())
        }
        let received = try XCTUnwrap(decoded)
        XCTAssertEqual(received.entries.map(\.name), entries.map(\.name))
        XCTAssertEqual(received.entries.map { inode($0.descriptor) }, sent.map(inode), "every file, in the order sent")
        XCTAssertNotEqual(received.descriptors, sent, "copies of their own")
    }

    func testTheDaemonsEndKeepsNoDescriptorAWorkerSends() throws {
        let sent = try openFiles(3)
        defer { sent.forEach { close($0) } }
        let (daemon, worker) = channels()
        try worker.send(WorkerCodec.frame(WorkerReply.done), descriptors: sent)
        guard case .binary = try daemon.receive(timeout: 5) else { return XCTFail("a reply") }
        XCTAssertEqual(daemon.takeDescriptors(), [], "a hijacked worker hands the daemon nothing")
    }

    func testAFrameWhoseNamesAndDescriptorsDisagreeIsRefusedAndClosed() throws {
        let passed = try openFiles(1)
        // A comic and a page named, one descriptor given.
        let files = RequestFiles(entries: [.init(kind: .comic, size: 0, name: "", descriptor: -1),
                                           .init(kind: .page, size: 1, name: "a.jpg", descriptor: -1)])
        let refused = files.payload.withUnsafeBytes { RequestFiles.decode($0, descriptors: passed) }
        XCTAssertNil(refused)
        XCTAssertEqual(fcntl(passed[0], F_GETFD), -1, "closed")
        XCTAssertEqual(errno, EBADF)
        // Two comics: refused too.
        let two = try openFiles(2)
        let twice = RequestFiles(entries: [.init(kind: .comic, size: 0, name: "", descriptor: -1),
                                           .init(kind: .comic, size: 0, name: "", descriptor: -1)])
        XCTAssertNil(twice.payload.withUnsafeBytes { RequestFiles.decode($0, descriptors: two) })
        XCTAssertEqual(two.map { fcntl($0, F_GETFD) }, [-1, -1])
    }
}

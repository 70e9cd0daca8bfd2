import Foundation
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyWorker

/// The control socket a running mount answers on, with real sockets in a private runtime folder.
final class ControlSocketTests: XCTestCase {
    private var runtime: URL!

    override func setUp() {
        runtime = ArchiveMaker.temporaryDirectory("runtime")
        setenv("XDG_RUNTIME_DIR", runtime.path, 1)
    }

    override func tearDown() {
        unsetenv("XDG_RUNTIME_DIR")
        try? FileManager.default.removeItem(at: runtime)
    }

    final class Seen: @unchecked Sendable {
        let lock = NSLock()
        var requests: [ControlRequest] = []
        var passwords: [[UInt8]] = []
    }

    func testRequestsAndPasswordsReachTheDaemonAndRepliesComeBack() throws {
        let seen = Seen()
        let server = try ControlServer(mountpoint: "/home/u/mnt") { request, password in
            seen.lock.withLock {
                seen.requests.append(request)
                if let password { seen.passwords.append(Array(password)) }
            }
            let ok = password.map { Array($0) == Array("sesame".utf8) } ?? true
            return ControlReply(outcome: ok ? .ok : .wrongPassword, message: ok ? "done" : "wrong password", mountpoint: "/home/u/mnt")
        }
        defer { server.stop() }
        XCTAssertEqual(try ControlClient.send(.status, to: "/home/u/mnt").message, "done")
        let right = Array("sesame".utf8)
        XCTAssertEqual(try right.withUnsafeBytes { try ControlClient.send(.unlock, to: "/home/u/mnt", password: $0) }.outcome, .ok)
        let wrong = Array("guess".utf8)
        XCTAssertEqual(try wrong.withUnsafeBytes { try ControlClient.send(.unlock, to: "/home/u/mnt", password: $0) }.outcome, .wrongPassword)
        XCTAssertEqual(try ControlClient.send(.lock, to: "/home/u/mnt").outcome, .ok)
        XCTAssertEqual(seen.requests, [.status, .unlock, .unlock, .lock])
        XCTAssertEqual(seen.passwords, [right, wrong])
        XCTAssertEqual(ControlClient.runningMounts(), ["/home/u/mnt"])
    }

    func testTheSocketAndItsFolderArePrivate() throws {
        let server = try ControlServer(mountpoint: "/mnt/a") { _, _ in ControlReply(outcome: .ok, message: "", mountpoint: "/mnt/a") }
        defer { server.stop() }
        var info = stat()
        XCTAssertEqual(stat(server.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(stat((server.path as NSString).deletingLastPathComponent, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        XCTAssertLessThan(server.path.utf8.count, 108, "fits sockaddr_un whatever the mountpoint")
        XCTAssertThrowsError(try ControlClient.send(.status, to: "/mnt/not-mounted"))
    }

    func testGarbageFromAClientNeverStopsTheServer() throws {
        let server = try ControlServer(mountpoint: "/mnt/b") { _, _ in ControlReply(outcome: .ok, message: "alive", mountpoint: "/mnt/b") }
        defer { server.stop() }
        for seed in 1...30 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = try ControlPaths.address(server.path)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            XCTAssertEqual(connected, 0)
            let junk = ArchiveMaker.noise(count: seed * 7, seed: UInt64(seed))
            _ = junk.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(fd)
        }
        XCTAssertNil(ControlReply.parseRequest(Array("{\"unlock\":{},\"lock\":{}}".utf8)))
        XCTAssertNil(ControlReply.parseRequest([UInt8](repeating: 0x7B, count: 5000)))
        XCTAssertEqual(try ControlClient.send(.status, to: "/mnt/b").message, "alive")
    }
}

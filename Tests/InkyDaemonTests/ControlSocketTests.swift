import Foundation
import InkyCore
@testable import InkyDaemon
import InkyTestSupport
import InkyWorker
import XCTest

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
        XCTAssertThrowsError(try ControlClient.send(.status, to: "/mnt/not-mounted")) {
            XCTAssertEqual($0 as? ControlError, .system(.ENOENT), "no socket for that mountpoint: connect(2) says so")
        }
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

    private func asNobody(_ arguments: [String], environment: [String: String]) throws -> CommandRunner.Result {
        try CommandRunner.capture("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + arguments, environment: environment)
    }

    private func dial(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = try ControlPaths.address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(connected, 0)
        return fd
    }

    func testAnotherUserIsRefusedByThePathAndAgainByItsCredentials() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to run commands as nobody (setpriv) and give nobody a folder (chown)") }
        let log = Seen()
        let handled = Seen()
        let server = try ControlServer(mountpoint: "/mnt/c", log: { line in log.lock.withLock { log.passwords.append(Array(line.text.utf8)) } }) { request, _ in
            handled.lock.withLock { handled.requests.append(request) }
            return ControlReply(outcome: .ok, message: "unlocked", mountpoint: "/mnt/c")
        }
        defer { server.stop() }

        // The path: the runtime folder is not nobody's, so its client will not use it, and says why.
        let byPath = try asNobody([CommandRunner.binaryForOtherUsers.path, "vault", "lock", "/mnt/c"], environment: ["XDG_RUNTIME_DIR": runtime.path])
        XCTAssertNotEqual(byPath.status, 0)
        XCTAssertTrue(byPath.stderr.contains("\(runtime.path) belongs to uid 0, not to you (uid 65534)"), byPath.stderr)
        let raw = try asNobody(["/usr/bin/python3", "-c", "import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])", server.path],
                               environment: [:])
        XCTAssertTrue(raw.stderr.contains("PermissionError"), "connect(2) itself is refused: \(raw.stderr)")

        // Were the path reachable (a folder opened by mistake, a link from nobody's own runtime
        // folder), SO_PEERCRED refuses on both ends: the client sends nothing to a socket that is
        // not its user's, and the server refuses and logs the connection.
        let folder = (server.path as NSString).deletingLastPathComponent
        XCTAssertEqual(chmod(folder, 0o711), 0)
        XCTAssertEqual(chmod(server.path, 0o666), 0)
        let nobodyRuntime = ArchiveMaker.temporaryDirectory("nobody-run")
        defer { try? FileManager.default.removeItem(at: nobodyRuntime) }
        let nobodyFolder = nobodyRuntime.appendingPathComponent("inkyfs")
        try FileManager.default.createDirectory(at: nobodyFolder, withIntermediateDirectories: true)
        for path in [nobodyRuntime.path, nobodyFolder.path] {
            XCTAssertEqual(chown(path, 65534, 65534), 0)
            XCTAssertEqual(chmod(path, 0o700), 0)
        }
        try FileManager.default.createSymbolicLink(atPath: nobodyFolder.appendingPathComponent((server.path as NSString).lastPathComponent).path,
                                                   withDestinationPath: server.path)
        let byCredentials = try asNobody([CommandRunner.binaryForOtherUsers.path, "vault", "lock", "/mnt/c"], environment: ["XDG_RUNTIME_DIR": nobodyRuntime.path])
        XCTAssertNotEqual(byCredentials.status, 0)
        XCTAssertTrue(byCredentials.stderr.contains("is served by uid \(getuid()), not by you (uid 65534): nothing was sent"),
                      byCredentials.stderr)
        let logDeadline = Date().addingTimeInterval(3)
        while log.lock.withLock({ log.passwords.isEmpty }) && Date() < logDeadline { usleep(20_000) }
        let logged = log.lock.withLock { log.passwords.map { String(decoding: $0, as: UTF8.self) } }
        XCTAssertTrue(logged.contains { $0.hasPrefix("control socket: refused a connection from uid 65534 pid ") }, "\(logged)")
        XCTAssertEqual(chmod(folder, 0o700), 0)
        XCTAssertEqual(handled.lock.withLock { handled.requests }, [], "nothing of nobody's reached the handler")
        XCTAssertEqual(try ControlClient.send(.status, to: "/mnt/c").message, "unlocked", "the owner is still served")
    }

    func testWrongPasswordsWaitLongerEachTimeAndARightOneResets() throws {
        XCTAssertEqual((0...9).map(PasswordThrottle.delay(afterFailures:)), [0, 0.5, 1, 2, 4, 8, 16, 30, 30, 30])
        XCTAssertEqual(PasswordThrottle.delay(afterFailures: 10_000), 30)
        let seen = Seen()
        let server = try ControlServer(mountpoint: "/mnt/d") { request, password in
            let right = password.map { Array($0) == Array("sesame".utf8) } ?? false
            seen.lock.withLock { seen.requests.append(request) }
            return ControlReply(outcome: right ? .ok : .wrongPassword, message: right ? "unlocked" : "wrong password", mountpoint: "/mnt/d")
        }
        defer { server.stop() }
        func unlock(_ password: String) throws -> ControlReply {
            try Array(password.utf8).withUnsafeBytes { try ControlClient.send(.unlock, to: "/mnt/d", password: $0) }
        }
        var reply = try unlock("guess")
        XCTAssertEqual(reply.outcome, .wrongPassword)
        XCTAssertEqual(reply.retryAfter, 0.5)
        // Within the wait nothing is heard, not even the right password.
        for attempt in ["guess again", "sesame"] {
            reply = try unlock(attempt)
            XCTAssertEqual(reply.outcome, .throttled)
            XCTAssertEqual(reply.retryAfter ?? 0, 0.5, accuracy: 0.3)
            XCTAssertTrue(reply.message.hasPrefix("too many wrong passwords: try again in"), reply.message)
        }
        XCTAssertEqual(seen.lock.withLock { seen.requests.count }, 1, "throttled attempts never reach the KDF")
        for expected in [1.0, 2.0] {
            Thread.sleep(forTimeInterval: reply.retryAfter ?? 0.5)
            reply = try unlock("guess")
            XCTAssertEqual(reply.outcome, .wrongPassword)
            XCTAssertEqual(reply.retryAfter, expected, "the wait doubles")
        }
        XCTAssertEqual(try unlock("sesame").outcome, .throttled)
        XCTAssertEqual(try ControlClient.send(.status, to: "/mnt/d").outcome, .wrongPassword, "other requests are served meanwhile (this fake answers all so)")
        Thread.sleep(forTimeInterval: 2.05)
        XCTAssertEqual(try unlock("sesame").outcome, .ok)
        reply = try unlock("guess")
        XCTAssertEqual(reply.retryAfter, 0.5, "a right password resets the wait")
    }

    func testSlowHugeOrSilentClientsCostTheServerNoMoreThanItsDeadline() throws {
        let server = try ControlServer(mountpoint: "/mnt/e") { _, _ in ControlReply(outcome: .ok, message: "alive", mountpoint: "/mnt/e") }
        defer { server.stop() }
        func reply(_ fd: Int32) -> ControlReply? {
            let channel = FrameChannel(fd: fd)
            guard case .message(let json)? = try? channel.receive(timeout: 10) else { return nil }
            return try? JSONDecoder().decode(ControlReply.self, from: json)
        }
        // A header announcing 4 MiB: refused on the header, nothing allocated or awaited.
        let huge = try dial(server.path)
        _ = [0, 0, 0x40, 0, 1].withUnsafeBytes { send(huge, $0.baseAddress, 5, Int32(MSG_NOSIGNAL)) }
        XCTAssertEqual(reply(huge)?.message, "malformed request")

        // A client that trickles a byte every half second, and one that sends nothing at all.
        let trickle = try dial(server.path)
        let silent = try dial(server.path)
        let started = Date()
        let sent = LockedBox(0)
        let trickling = Thread {
            for byte: UInt8 in [100, 0, 0, 0, 1] + Array(repeating: 0x20, count: 100) {
                guard [byte].withUnsafeBytes({ send(trickle, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }) == 1 else { return }
                sent.value += 1
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        trickling.start()
        // The trickler is under way (its first byte sent) before the status request is made.
        XCTAssertTrue(waitUntil(30) { sent.value >= 1 }, "the trickler sends")
        XCTAssertEqual(try ControlClient.send(.status, to: "/mnt/e").message, "alive")
        let waited = Date().timeIntervalSince(started)
        // The trickle alone would take 52 s: well under that, with room for a loaded machine.
        XCTAssertLessThan(waited, 2 * (ControlServer.connectionSeconds + ControlServer.drainSeconds) + 10, "each bad client costs at most its deadline")
        XCTAssertGreaterThan(waited, ControlServer.connectionSeconds - 0.5, "the trickler was really served first")
        XCTAssertEqual(reply(trickle)?.message, "malformed request")
        XCTAssertEqual(reply(silent)?.message, "malformed request")
        print("control socket: a trickling and a silent client delayed a status request by \(String(format: "%.1f", waited)) s")
    }
}

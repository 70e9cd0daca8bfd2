import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs serve` run by the built binary on a loopback port the system picks, as a child of the
/// test, with a state and cache folder of its own. `stop()` sends SIGTERM and returns the exit
/// status: a clean stop is 0.
final class ServedLibrary: @unchecked Sendable {
    let library: URL
    let stateHome: URL
    let process = Process()
    private let output = Pipe()
    /// `http://127.0.0.1:PORT` (`https://` when served with a certificate), without the `/opds`.
    let base: String
    /// Given to curl before every request of `get` (`--cacert` for HTTPS).
    let clientOptions: [String]
    private let log = LockedBox("")

    /// `state`: the state folder (`--state`), one of the test's own unless given (a mount's, to share it).
    init(library: URL, state: URL? = nil, arguments: [String] = [], environment: [String: String] = [:],
         clientOptions: [String] = []) throws {
        self.library = library
        self.clientOptions = clientOptions
        stateHome = ArchiveMaker.temporaryDirectory("serve-state", removedAtExit: true)
        process.executableURL = CommandRunner.binary
        let folder = state?.path ?? stateHome.path + "/state"
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--state", folder] + arguments + [library.path]
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": stateHome.path,
                                                                           "XDG_CACHE_HOME": stateHome.path + "/cache"]) { $1 }
            .merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = output
        output.fileHandleForReading.readabilityHandler = { [log] handle in
            let more = String(decoding: handle.availableData, as: UTF8.self)
            log.value += more
        }
        try process.run()
        var url: String?
        let child = process, buffer = log
        _ = waitUntil(30) {
            url = Self.url(in: buffer.value)
            return url != nil || !child.isRunning
        }
        guard let url else {
            if child.isRunning { kill(child.processIdentifier, SIGKILL) }
            throw ServeFailure(log: buffer.value)
        }
        base = String(url.dropLast("/opds".count))
    }

    /// The URL of the log line `serving LIBRARY at URL`.
    private static func url(in text: String) -> String? {
        guard let range = text.range(of: " at http://") ?? text.range(of: " at https://") else { return nil }
        let rest = text[text.index(range.lowerBound, offsetBy: 4)...]
        guard let end = rest.firstIndex(of: "\n") else { return nil }
        return String(rest[..<end])
    }

    /// The port the server listens on.
    var port: Int { Int(base.split(separator: ":").last!)! }

    var logText: String { log.value }

    /// SIGTERM, then the exit status (SIGKILL after 20 s: a server that does not stop is a failure).
    func stop() -> Int32 {
        guard process.isRunning else {
            closeOutput()
            return process.terminationStatus
        }
        kill(process.processIdentifier, SIGTERM)
        if !waitUntil(20, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        let status = process.waitForExit()
        closeOutput()
        return status
    }

    /// The log pipe's handler and descriptor go once the server has exited: XCTest keeps test
    /// case objects, and whatever they hold, until the whole run ends.
    private func closeOutput() {
        guard output.fileHandleForReading.readabilityHandler != nil else { return }
        output.fileHandleForReading.readabilityHandler = nil
        // What is already in the pipe, without waiting: a worker the server left could hold its other end.
        let fd = output.fileHandleForReading.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while case let got = read(fd, &buffer, buffer.count), got > 0 || (got < 0 && errno == EINTR) {
            if got > 0 { log.value += String(decoding: buffer[0..<got], as: UTF8.self) }
        }
        try? output.fileHandleForReading.close()
    }

    /// `stop()`, failing the test unless the server stopped cleanly (its log then shown).
    func stopCleanly(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(stop(), 0, "SIGTERM stops the server cleanly:\n\(logText)", file: file, line: line)
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    struct ServeFailure: Error, CustomStringConvertible {
        let log: String
        var description: String { "inkyfs serve did not start:\n\(log)" }
    }

    /// An HTTP exchange through curl, a real client: status, headers (names lowercased), body.
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// `target` is sent as it is (`--path-as-is`: no `..` folded away by the client).
    /// `body` goes as it is (`--data-binary`); `from` is the address curl connects from (another
    /// loopback address is another client to the server).
    func get(_ target: String, headers: [String] = [], method: String = "GET", body: String? = nil, from: String? = nil) throws -> Reply {
        let headerFile = ArchiveMaker.temporaryDirectory("curl", removedAtExit: true).appendingPathComponent("headers")
        var arguments = clientOptions + ["-s", "--path-as-is", "-X", method, "-D", headerFile.path, "-o", "-"]
        if method == "HEAD" { arguments = clientOptions + ["-s", "--path-as-is", "-I", "-D", headerFile.path, "-o", "/dev/null"] }
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["--data-binary", body] }
        if let from { arguments += ["--interface", from] }
        let (status, body, errors) = try CommandRunner.captureBytes("/usr/bin/curl", arguments + [base + target])
        guard status == 0 else { throw CurlFailure(target: target, status: status, errors: errors) }
        let head = try String(contentsOf: headerFile, encoding: .utf8)
        var reply = Reply(status: 0, headers: [:], body: method == "HEAD" ? [] : body)
        for line in head.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/") {
                reply.status = Int(line.split(separator: " ")[1]) ?? 0
                reply.headers = [:]
            } else if let colon = line.firstIndex(of: ":") {
                reply.headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return reply
    }

    struct CurlFailure: Error, CustomStringConvertible {
        let target: String, status: Int32, errors: String
        var description: String { "curl \(target) exited \(status): \(errors)" }
    }
}

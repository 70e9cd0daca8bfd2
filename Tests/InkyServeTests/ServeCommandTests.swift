import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs serve` as a command: what it refuses before listening, and a clean stop.
final class ServeCommandTests: XCTestCase {
    /// With no account, an address other than loopback would open the library to the network.
    func testANonLoopbackAddressIsRefusedWithoutAccounts() throws {
        for address in ["0.0.0.0:0", "[::]:0"] {
            let result = try CommandRunner.inkyfs(["serve", "--listen", address, Corpus.fixtures.path])
            XCTAssertEqual(result.status, 2, address)
            XCTAssertTrue(result.stderr.contains("refusing to listen on") && result.stderr.contains("no account"), result.stderr)
        }
    }

    func testTLSAndBadAddressesAreUsageErrors() throws {
        let tls = try CommandRunner.inkyfs(["serve", "--tls-cert", "/tmp/cert.pem", "--tls-key", "/tmp/key.pem", Corpus.fixtures.path])
        XCTAssertEqual(tls.status, 64)
        XCTAssertTrue(tls.stderr.contains("HTTPS is not supported yet"), tls.stderr)
        let name = try CommandRunner.inkyfs(["serve", "--listen", "example.org:80", Corpus.fixtures.path])
        XCTAssertEqual(name.status, 64)
        XCTAssertTrue(name.stderr.contains("numeric address"), name.stderr)
        let file = try CommandRunner.inkyfs(["serve", Corpus.fixture("Moon Tales/Moon Tales 01.cb7")])
        XCTAssertEqual(file.status, 2)
        XCTAssertTrue(file.stderr.contains("is not a folder"), file.stderr)
    }

    /// As systemd runs it (contrib/systemd/inkyfs-serve@.service, `Type=notify`): READY=1 once it
    /// listens; SIGTERM then ends it with STOPPING=1, status 0 and its last word in the log.
    func testReadyOnceListeningAndSIGTERMStopsTheServerCleanly() throws {
        let notify = try NotifySocket()
        let server = try ServedLibrary(library: Corpus.fixtures, environment: ["NOTIFY_SOCKET": notify.name])
        let ready = try XCTUnwrap(notify.receive(timeout: 20), "no READY=1 within 20 s")
        let lines = Set(ready.split(separator: "\n").map(String.init))
        XCTAssertTrue(lines.contains("READY=1") && lines.contains("MAINPID=\(server.process.processIdentifier)"), ready)
        XCTAssertEqual(try server.get("/opds").status, 200)
        kill(server.process.processIdentifier, SIGTERM)
        XCTAssertEqual(notify.receive(timeout: 20), "STOPPING=1")
        XCTAssertEqual(server.stop(), 0, server.logText)
        XCTAssertTrue(server.logText.contains("stopped serving"), server.logText)
    }
}

import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs serve --tls-cert --tls-key`: HTTPS read by real clients (curl, `openssl s_client`,
/// raw sockets), compared byte for byte with the same library served over plain HTTP.
final class ServeTLSTests: XCTestCase {
    nonisolated(unsafe) static var material: TLSMaterial?
    nonisolated(unsafe) static var secure: ServedLibrary?
    nonisolated(unsafe) static var plain: ServedLibrary?
    /// Why the class's servers did not start: each test fails with it (never a silent skip).
    nonisolated(unsafe) static var failure: (any Error)?
    var tls: TLSMaterial { Self.material! }
    var secure: ServedLibrary { Self.secure! }
    var plain: ServedLibrary { Self.plain! }
    /// A 455 kB CBZ: many TLS records.
    static let comic = "/opds/comic/cbz?path=Space%20Patrol/Space%20Patrol%20001.cbz"

    override class func setUp() {
        super.setUp()
        do {
            let material = try TLSMaterial()
            // Readable by every user: served anyway, with a warning.
            chmod(material.key, 0o644)
            self.material = material
            // The system's OpenSSL settings lowered to TLS 1.0 and every cipher: what the server
            // then refuses, it refuses by its own settings (Debian's would refuse TLS 1.1 anyway).
            let permissive = material.path("openssl.cnf")
            try """
                openssl_conf = init
                [init]
                ssl_conf = ssl
                [ssl]
                system_default = permissive
                [permissive]
                MinProtocol = TLSv1
                CipherString = DEFAULT@SECLEVEL=0

                """.write(toFile: permissive, atomically: true, encoding: .utf8)
            secure = try ServedLibrary(library: Corpus.fixtures, arguments: ["--tls-cert", material.chain, "--tls-key", material.key],
                                       environment: ["OPENSSL_CONF": permissive], clientOptions: ["--cacert", material.authority])
            plain = try ServedLibrary(library: Corpus.fixtures)
        } catch {
            failure = error
        }
    }

    override class func tearDown() {
        _ = secure?.stop()
        _ = plain?.stop()
        secure = nil
        plain = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        if let failure = Self.failure { throw failure }
    }

    func testTheLogGivesTheHTTPSAddressAndWarnsOfAKeyOthersCanRead() {
        XCTAssertTrue(secure.logText.contains("at https://127.0.0.1:\(secure.port)/opds"), secure.logText)
        XCTAssertTrue(secure.logText.contains("can be read by every user of this machine (mode 644): chmod 600 \(tls.key)"), secure.logText)
        XCTAssertFalse(plain.logText.contains("chmod 600"), plain.logText)
    }

    /// Feeds differ only in their `<updated>` time (the second they were made); pages and covers not at all.
    func testTheCatalogAndPagesAreTheSameOverHTTPSAsOverHTTP() throws {
        func stamped(_ reply: ServedLibrary.Reply) -> String {
            reply.text.replacingOccurrences(of: #"<updated>[^<]*</updated>"#, with: "<updated/>", options: .regularExpression)
        }
        for target in ["/opds", "/opds/folders?path=Moon%20Tales", "/opds/folders?path=Space%20Patrol"] {
            let (overTLS, overHTTP) = (try secure.get(target), try plain.get(target))
            XCTAssertEqual(overTLS.status, 200, target)
            XCTAssertTrue(overTLS.text.contains("<entry>"), target)
            XCTAssertEqual(stamped(overTLS), stamped(overHTTP), target)
        }
        for target in ["/opds/comic/page?path=Moon%20Tales/Moon%20Tales%2002.cbt&page=0", "/opds/comic/cover?path=Space%20Patrol/Space%20Patrol%20002.cbz"] {
            let (overTLS, overHTTP) = (try secure.get(target), try plain.get(target))
            XCTAssertEqual(overTLS.status, 200, target)
            XCTAssertGreaterThan(overTLS.body.count, 1000, target)
            XCTAssertEqual(overTLS.body, overHTTP.body, target)
        }
    }

    func testACBZAndItsRangesAreExactOverHTTPS() throws {
        let whole = try secure.get(Self.comic)
        XCTAssertEqual(whole.status, 200)
        XCTAssertEqual(whole.headers["content-length"], String(whole.body.count))
        XCTAssertGreaterThan(whole.body.count, 400_000)
        XCTAssertEqual(whole.body, try plain.get(Self.comic).body)
        let file = ArchiveMaker.temporaryDirectory("tls-cbz", removedAtExit: true).appendingPathComponent("comic.cbz")
        try Data(whole.body).write(to: file)
        XCTAssertTrue(try ArchiveMaker.run("/usr/bin/unzip", ["-t", file.path]).contains("No errors detected"))
        // Ranges across record boundaries (16 kB each), and a suffix.
        for (range, slice) in [("bytes=1000-70000", 1000...70000), ("bytes=16380-16390", 16380...16390),
                               ("bytes=-5000", (whole.body.count - 5000)...(whole.body.count - 1))] {
            let part = try secure.get(Self.comic, headers: ["Range: \(range)"])
            XCTAssertEqual(part.status, 206, range)
            XCTAssertEqual(part.body, Array(whole.body[slice]), range)
        }
    }

    /// curl checks the certificate against the system's authorities; ours is not one of them.
    func testAClientThatDoesNotTrustTheCertificateIsRefused() throws {
        let untrusting = try CommandRunner.capture("/usr/bin/curl", ["-s", "-S", "-o", "/dev/null", secure.base + "/opds"])
        XCTAssertEqual(untrusting.status, 60, untrusting.stderr)
        XCTAssertTrue(untrusting.stderr.contains("certificate"), untrusting.stderr)
        // The certificate names localhost too.
        let byName = try CommandRunner.capture("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", tls.authority,
                                                                 "https://localhost:\(secure.port)/opds"])
        XCTAssertEqual(byName.stdout, "200", byName.stderr)
    }

    func testPlainHTTPOnTheHTTPSPortIsAnswered400AndTheServerGoesOn() throws {
        let mistaken = try CommandRunner.capture("/usr/bin/curl", ["-s", "-w", "\n%{http_code}", "http://127.0.0.1:\(secure.port)/opds"])
        XCTAssertEqual(mistaken.status, 0, mistaken.stderr)
        XCTAssertTrue(mistaken.stdout.hasSuffix("\n400"), mistaken.stdout)
        XCTAssertTrue(mistaken.stdout.contains("use https://"), mistaken.stdout)
        XCTAssertEqual(try secure.get("/opds").status, 200)
        XCTAssertTrue(waitUntil(5) { self.secure.logText.contains("a plain HTTP request came to the HTTPS port") }, secure.logText)
    }

    /// A scanner's garbage, a handshake abandoned at any point, a handshake that stalls: each
    /// costs its own connection, and the server goes on serving meanwhile and after.
    func testGarbageAndAbortedHandshakesCostOnlyTheirConnection() throws {
        // A record header that promises 512 bytes, and one of them: the server waits for the rest.
        let stalled = try RawClient(port: secure.port)
        stalled.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        XCTAssertEqual(try secure.get("/opds").status, 200, "a stalled handshake holds nothing else up")

        let garbage = try RawClient(port: secure.port)
        garbage.send((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        XCTAssertNotNil(garbage.readUntilClosed(seconds: 10), "garbage closes its connection at once")

        let hello = try Self.clientHello()
        XCTAssertEqual(hello.first, 0x16)
        let abandoned = try RawClient(port: secure.port)
        abandoned.send(hello)
        XCTAssertEqual(abandoned.readSome(seconds: 10).first, 0x16, "the server answers a ClientHello with its handshake")
        let halfHello = try RawClient(port: secure.port)
        halfHello.send(Array(hello.prefix(hello.count / 2)))
        withExtendedLifetime([abandoned, halfHello]) {}

        XCTAssertEqual(try secure.get("/opds").status, 200)
        XCTAssertEqual(try secure.get(Self.comic).body.count, try plain.get(Self.comic).body.count)
        XCTAssertTrue(waitUntil(5) { self.secure.logText.contains("failed, closed: wrong version number") }, secure.logText)
        withExtendedLifetime(stalled) {}
        XCTAssertTrue(secure.process.isRunning)
    }

    /// TLS 1.1 is refused by the server (the client is let to offer it: its own floor is lower);
    /// TLS 1.2 and 1.3 are served, ALPN picks HTTP/1.1, and a client asking for h2 gets HTTP/1.1.
    func testTLS11IsRefusedAndTLS12And13AreServedAsHTTP11() throws {
        func client(_ options: String) throws -> CommandRunner.Result {
            try CommandRunner.capture("/bin/sh", ["-c", "openssl s_client -connect 127.0.0.1:\(secure.port) -CAfile \(tls.authority) "
                                                  + "\(options) </dev/null 2>&1"])
        }
        let old = try client("-tls1_1 -cipher DEFAULT@SECLEVEL=0")
        XCTAssertNotEqual(old.status, 0, old.stdout)
        XCTAssertTrue(old.stdout.contains("alert protocol version"), old.stdout)
        for (option, version) in [("-tls1_2", "TLSv1.2"), ("-tls1_3", "TLSv1.3")] {
            // -brief says the version as soon as the handshake ends (the full summary's session
            // block may come before a TLS 1.3 ticket does); the full one says ALPN.
            let brief = try client("\(option) -brief")
            XCTAssertEqual(brief.status, 0, brief.stdout)
            XCTAssertTrue(brief.stdout.contains("Protocol version: \(version)\n"), brief.stdout)
            XCTAssertTrue(brief.stdout.contains("Verification: OK\n"), brief.stdout)
            let full = try client("\(option) -alpn http/1.1")
            XCTAssertEqual(full.status, 0, full.stdout)
            XCTAssertTrue(full.stdout.contains("ALPN protocol: http/1.1\n"), full.stdout)
        }
        let h2 = try CommandRunner.capture("/usr/bin/curl", ["-s", "--http2", "--cacert", tls.authority, "-o", "/dev/null",
                                                             "-w", "%{http_version} %{http_code}", secure.base + "/opds"])
        XCTAssertEqual(h2.stdout, "1.1 200", h2.stderr)
    }

    /// A response to `Connection: close` ends with close_notify: the client can tell the
    /// whole answer from a cut connection (s_client says "closed" for close_notify alone).
    func testTheServerEndsAConnectionWithCloseNotify() throws {
        let exchange = try CommandRunner.capture("/bin/sh", ["-c", "printf 'GET /opds HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' | "
                                                          + "openssl s_client -connect 127.0.0.1:\(secure.port) -CAfile \(tls.authority) -ign_eof 2>/dev/null"])
        XCTAssertEqual(exchange.status, 0, exchange.stdout)
        XCTAssertTrue(exchange.stdout.contains("HTTP/1.1 200 OK\r\n") && exchange.stdout.contains("</feed>\n"), exchange.stdout)
        XCTAssertEqual(exchange.stdout.split(separator: "\n").last, "closed", exchange.stdout)
    }

    /// A real ClientHello, made by Python's ssl module over memory buffers.
    static func clientHello() throws -> [UInt8] {
        let hex = try ArchiveMaker.run("/usr/bin/python3", ["-c", """
            import ssl, sys
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            client = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
            try:
                client.do_handshake()
            except ssl.SSLWantReadError:
                pass
            sys.stdout.write(outgoing.read().hex())
            """])
        var bytes: [UInt8] = []
        var at = hex.startIndex
        while let next = hex.index(at, offsetBy: 2, limitedBy: hex.endIndex), at < hex.endIndex {
            bytes.append(UInt8(hex[at..<next], radix: 16)!)
            at = next
        }
        return bytes
    }
}

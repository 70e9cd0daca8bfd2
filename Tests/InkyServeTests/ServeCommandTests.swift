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

    func testHalfATLSOptionAndBadAddressesAreUsageErrors() throws {
        let certificateAlone = try CommandRunner.inkyfs(["serve", "--tls-cert", "/tmp/cert.pem", Corpus.fixtures.path])
        XCTAssertEqual(certificateAlone.status, 64)
        XCTAssertTrue(certificateAlone.stderr.contains("--tls-cert needs --tls-key"), certificateAlone.stderr)
        let keyAlone = try CommandRunner.inkyfs(["serve", "--tls-key", "/tmp/key.pem", Corpus.fixtures.path])
        XCTAssertEqual(keyAlone.status, 64)
        XCTAssertTrue(keyAlone.stderr.contains("--tls-key needs --tls-cert"), keyAlone.stderr)
        let name = try CommandRunner.inkyfs(["serve", "--listen", "example.org:80", Corpus.fixtures.path])
        XCTAssertEqual(name.status, 64)
        XCTAssertTrue(name.stderr.contains("numeric address"), name.stderr)
        let file = try CommandRunner.inkyfs(["serve", Corpus.fixture("Moon Tales/Moon Tales 01.cb7")])
        XCTAssertEqual(file.status, 2)
        XCTAssertTrue(file.stderr.contains("is not a folder"), file.stderr)
    }

    /// A certificate and key that cannot serve are refused before the server listens, each
    /// saying which file and what to do; the key is never asked for a passphrase.
    func testCertificatesAndKeysThatCannotServeAreRefusedSayingWhy() throws {
        let tls = try TLSMaterial()
        let state = ArchiveMaker.temporaryDirectory("serve-tls-state", removedAtExit: true).path
        func serve(_ certificate: String, _ key: String) throws -> CommandRunner.Result {
            try CommandRunner.inkyfs(["serve", "--listen", "127.0.0.1:0", "--state", state, "--tls-cert", certificate, "--tls-key", key,
                                      Corpus.fixtures.path])
        }
        let missing = tls.path("nothing.pem")
        let directory = tls.folder.path
        let refusals: [(String, String, String)] = [
            (missing, tls.key, "certificate \(missing): no such file"),
            (tls.chain, missing, "private key \(missing): no such file"),
            (directory, tls.key, "certificate \(directory): not a file"),
            (tls.chain, tls.otherKey, "private key \(tls.otherKey) is not the key of certificate \(tls.chain)"),
            (tls.chain, tls.otherTypeKey, "private key \(tls.otherTypeKey) is not the key of certificate \(tls.chain)"),
            (tls.key, tls.chain, "certificate \(tls.key): holds a private key, not a certificate: are the certificate and the key given the other way round?"),
            (tls.chain, tls.encryptedKey, "private key \(tls.encryptedKey): it is encrypted with a passphrase"),
            (tls.authority, tls.key, "private key \(tls.key) is not the key of certificate \(tls.authority)"),
        ]
        for (certificate, key, message) in refusals {
            let result = try serve(certificate, key)
            XCTAssertEqual(result.status, 2, "\(certificate) \(key): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("inkyfs: cannot serve HTTPS: \(message)"), result.stderr)
            XCTAssertFalse(result.stderr.contains("serving"), result.stderr)
        }
        // HTTPS does not stand in for an account: beyond loopback, one is still needed.
        let open = try CommandRunner.inkyfs(["serve", "--listen", "0.0.0.0:0", "--state", state, "--tls-cert", tls.chain, "--tls-key", tls.key,
                                             Corpus.fixtures.path])
        XCTAssertEqual(open.status, 2, open.stderr)
        XCTAssertTrue(open.stderr.contains("refusing to listen on") && open.stderr.contains("no account"), open.stderr)
        // A key the user cannot read (root reads every file: then run as another user).
        let unreadable = tls.path("unreadable.key")
        try FileManager.default.copyItem(atPath: tls.key, toPath: unreadable)
        chmod(unreadable, 0)
        let user = try TestUser.make()
        defer { user?.remove() }
        let arguments = ["serve", "--listen", "127.0.0.1:0", "--tls-cert", tls.chain, "--tls-key", unreadable, Corpus.fixtures.path]
        let result = try user.map { try $0.run(CommandRunner.binaryForOtherUsers.path, arguments) } ?? CommandRunner.inkyfs(arguments)
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("private key \(unreadable): cannot read it: Permission denied"), result.stderr)
    }

    /// An expired certificate is served (the clock may be what is wrong), with a warning.
    func testAnExpiredCertificateIsServedWithAWarning() throws {
        let tls = try TLSMaterial()
        let (certificate, key) = try tls.expired()
        let server = try ServedLibrary(library: Corpus.fixtures, arguments: ["--tls-cert", certificate, "--tls-key", key],
                                       clientOptions: ["--cacert", certificate])
        XCTAssertTrue(server.logText.contains("certificate \(certificate) has expired: clients will refuse it"), server.logText)
        XCTAssertFalse(server.logText.contains("chmod 600"), server.logText)
        XCTAssertThrowsError(try server.get("/opds"), "curl refuses an expired certificate")
        server.stopCleanly()
    }

    /// `inkyfs serve` checks its options itself, before it looks for the server: a bad one is a
    /// usage error even where the server executable is missing, and a missing one is an error
    /// that says where it was looked for and how to fix it.
    func testOptionsAreCheckedBeforeTheServerExecutableAndAMissingOneSaysWhereItLooked() throws {
        let missing = ArchiveMaker.temporaryDirectory("no-serve").appendingPathComponent("inkyfs-serve").path
        let environment = ["INKYFS_SERVE": missing]
        let address = try CommandRunner.inkyfs(["serve", "--listen", "example.org:80", Corpus.fixtures.path], environment: environment)
        XCTAssertEqual(address.status, 64, address.stderr)
        XCTAssertTrue(address.stderr.contains("numeric address"), address.stderr)
        let limit = try CommandRunner.inkyfs(["serve", "--pdf-height", "5", Corpus.fixtures.path], environment: environment)
        XCTAssertEqual(limit.status, 64, limit.stderr)
        XCTAssertTrue(limit.stderr.contains("--pdf-height must be between 100 and 20000 pixels"), limit.stderr)
        let server = try CommandRunner.inkyfs(["serve", "--listen", "127.0.0.1:0", Corpus.fixtures.path], environment: environment)
        XCTAssertEqual(server.status, 2, server.stderr)
        XCTAssertEqual(server.stderr, "inkyfs: cannot start the server: no inkyfs-serve at \(missing) (INKYFS_SERVE); reinstall inkyfs "
                       + "(scripts/install puts it in PREFIX/libexec/inkyfs/), or set INKYFS_SERVE to its path\n")
    }

    /// As systemd runs it (contrib/systemd/inkyfs-serve@.service, `Type=notify`, `NotifyAccess=main`):
    /// READY=1 from the pid it started (`inkyfs serve` becomes the server by execv) once it listens;
    /// SIGTERM then ends it with STOPPING=1, status 0 and its last word in the log.
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

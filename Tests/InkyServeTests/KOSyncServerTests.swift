import Foundation
import InkyTestSupport
import XCTest

/// KOReader's progress sync and the logins, against a real `inkyfs serve --allow-registration` on
/// loopback and a real mount of the same library and state: the requests KOReader's sync plugin
/// makes (kosync.koplugin: KOSyncClient.lua, api.json; its headers and media type) with every
/// response's status and shape, HTTP Basic on the catalog, the throttle, and progress moving
/// between KOReader and the mount's `Continue Reading/`.
final class KOSyncServerTests: XCTestCase {
    nonisolated(unsafe) static var served: ServedLibrary?
    var server: ServedLibrary { Self.served! }
    var state: String { server.stateHome.path + "/state" }

    /// md5("secret words"): what KOReader sends as the key of the password "secret words".
    let key = "8f6f4f9567df74df3b717d825c16a4d1"
    /// What KOReader's GinClient and KOSyncAuth middlewares put on every request.
    var koreader: [String] { ["Accept: application/vnd.koreader.v1+json", "Content-Type: application/json", "x-auth-user: reader", "x-auth-key: \(key)"] }

    override class func setUp() {
        super.setUp()
        guard let library = try? PartialMD5.goldenLibrary() else { return }
        served = try? ServedLibrary(library: library, arguments: ["--allow-registration"])
    }

    override class func tearDown() {
        served?.stopCleanly()
        served = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        try XCTSkipUnless(Self.served != nil, "the server did not start")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3")
    }

    private func object(_ reply: ServedLibrary.Reply) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any], reply.text)
    }

    private func canonical(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    /// Asserts status, JSON media type and body (keys sorted; `timestamp` only checked to be a number).
    private func assertReply(_ reply: ServedLibrary.Reply, _ status: Int, _ expected: [String: Any],
                             file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(reply.status, status, reply.text, file: file, line: line)
        XCTAssertEqual(reply.headers["content-type"], "application/json", file: file, line: line)
        var body = try object(reply)
        if expected["timestamp"] != nil {
            XCTAssertNotNil(body["timestamp"] as? Int, reply.text, file: file, line: line)
            body["timestamp"] = expected["timestamp"]
        }
        XCTAssertEqual(canonical(body), canonical(expected), file: file, line: line)
    }

    /// The account, made through KOReader's registration unless an earlier test made it (each
    /// registration from an address slows the next).
    private func register() throws {
        if try server.get("/users/auth", headers: koreader, from: "127.0.0.2").status == 200 { return }
        let created = try server.get("/users/create", headers: Array(koreader.prefix(2)), method: "POST",
                                     body: "{\"username\":\"reader\",\"password\":\"\(key)\"}")
        XCTAssertTrue([201, 402].contains(created.status), created.text)
    }

    /// The served CBZ as KOReader downloads it, and its digest as KOReader computes it (Python).
    private func downloadedCBZDigest() throws -> String {
        let download = try server.get("/opds/comic/cbz?path=Moon%20Tales%2002.cbt", headers: ["Authorization: Basic " + Data("reader:secret words".utf8).base64EncodedString()])
        XCTAssertEqual(download.status, 200, download.text)
        let file = ArchiveMaker.temporaryDirectory("koreader", removedAtExit: true).appendingPathComponent("Moon Tales 02.cbz")
        try Data(download.body).write(to: file)
        let digest = try XCTUnwrap(PartialMD5.python([file.path]).first)
        XCTAssertEqual(digest, PartialMD5.goldenCBZ, "the download is the CBZ the mount serves")
        // Digested by the server after it was served: waited for in its database.
        let query = "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro',uri=True); print(c.execute('select count(*) from document_digests where cbz_md5=?',(sys.argv[2],)).fetchone()[0])"
        XCTAssertTrue(waitUntil(20) { (try? CommandRunner.capture("/usr/bin/python3", ["-c", query, state + "/state.sqlite", digest]).stdout) == "1\n" },
                      "the served CBZ's digest is kept")
        return digest
    }

    func testKOReadersRequestsAreAnsweredAsItsServerAnswers() throws {
        // Register (KOSyncClient:register): POST /users/create {username, password = md5(password)}.
        let body = "{\"username\":\"reader\",\"password\":\"\(key)\"}"
        let created = try server.get("/users/create", headers: Array(koreader.prefix(2)), method: "POST", body: body)
        if created.status == 201 { try assertReply(created, 201, ["username": "reader"]) }
        try assertReply(try server.get("/users/create", headers: Array(koreader.prefix(2)), method: "POST", body: body, from: "127.0.0.9"),
                        402, ["code": 2002, "message": "Username is already registered."])
        // Login (KOSyncClient:authorize): GET /users/auth with x-auth-user and x-auth-key.
        try assertReply(try server.get("/users/auth", headers: koreader), 200, ["authorized": "OK"])

        let document = try downloadedCBZDigest()
        try assertReply(try server.get("/syncs/progress/\(document)", headers: koreader), 200, [:])
        // Push (KOSyncClient:update_progress): page 4 of 6 of a paged document, progress as a string.
        let push = "{\"document\":\"\(document)\",\"progress\":\"4\",\"percentage\":0.6666,\"device\":\"Kobo Clara HD\",\"device_id\":\"A1B2C3\"}"
        try assertReply(try server.get("/syncs/progress", headers: koreader, method: "PUT", body: push), 200, ["document": document, "timestamp": 0])
        // Pull (KOSyncClient:get_progress).
        try assertReply(try server.get("/syncs/progress/\(document)", headers: koreader), 200,
                        ["document": document, "progress": "4", "percentage": 0.6666, "device": "Kobo Clara HD", "device_id": "A1B2C3", "timestamp": 0])
        let progress = try CommandRunner.inkyfs(["progress", "--json", "--state", state])
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(progress.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(rows.first?["page"] as? Int, 4, progress.stdout)
        XCTAssertEqual(rows.first?["pageCount"] as? Int, 6)

        // Malformed pushes, as the reference server answers them.
        try assertReply(try server.get("/syncs/progress", headers: koreader, method: "PUT", body: "{\"progress\":\"4\"}"),
                        403, ["code": 2004, "message": "Field 'document' not provided."])
        try assertReply(try server.get("/syncs/progress", headers: koreader, method: "PUT", body: "{\"document\":\"\(document)\"}"),
                        403, ["code": 2003, "message": "Invalid request"])
    }

    func testWrongOrMissingCredentialsGet401() throws {
        try register()
        let login = "Authorization: Basic " + Data("reader:secret words".utf8).base64EncodedString()
        XCTAssertEqual(try server.get("/opds", headers: [login]).status, 200)
        for headers in [[], ["Authorization: Basic " + Data("reader:wrong".utf8).base64EncodedString()],
                        ["Authorization: Basic " + Data("reader:\(key)".utf8).base64EncodedString()], ["Authorization: Bearer x"]] {
            // Each from an address of its own: a failure holds its address back.
            let refused = try server.get("/opds", headers: headers, from: "127.0.0.\(20 + headers.count + (headers.first?.count ?? 0) % 50)")
            XCTAssertEqual(refused.status, 401, "\(headers)")
            XCTAssertEqual(refused.headers["www-authenticate"], "Basic realm=\"inkyfs\", charset=\"UTF-8\"")
        }
        for headers in [Array(koreader.prefix(2)), Array(koreader.prefix(3)) + ["x-auth-key: 0"]] {
            try assertReply(try server.get("/users/auth", headers: headers, from: "127.0.0.\(80 + headers.count)"), 401, ["code": 2001, "message": "Unauthorized"])
        }
    }

    func testRepeatedFailuresAreThrottled() throws {
        try register()
        let wrong = "Authorization: Basic " + Data("reader:nope".utf8).base64EncodedString()
        XCTAssertEqual(try server.get("/opds", headers: [wrong], from: "127.0.0.5").status, 401)
        let held = try server.get("/opds", headers: ["Authorization: Basic " + Data("reader:secret words".utf8).base64EncodedString()], from: "127.0.0.5")
        XCTAssertEqual(held.status, 429, "even the right password waits: a refusal says nothing")
        XCTAssertEqual(held.headers["retry-after"], "1")
        XCTAssertEqual(try server.get("/users/auth", headers: koreader, from: "127.0.0.6").status, 200, "another client is not held back")
        XCTAssertTrue(waitUntil(5) { (try? self.server.get("/users/auth", headers: self.koreader, from: "127.0.0.5").status) == 200 },
                      "and after the wait, this one logs in again")
    }

    func testProgressMovesBetweenKOReaderAndARunningMount() throws {
        try register()
        let document = try downloadedCBZDigest()
        let mount = try MountedLibrary(library: server.library, arguments: ["--state", state])
        let push = "{\"document\":\"\(document)\",\"progress\":\"2\",\"percentage\":0.3333,\"device\":\"Kobo Clara HD\",\"device_id\":\"A1B2C3\"}"
        XCTAssertEqual(try server.get("/syncs/progress", headers: koreader, method: "PUT", body: push).status, 200)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Continue Reading")), ["01 - Moon Tales 02"],
                       "the running mount shows what KOReader pushed")
        let feed = try server.get("/opds/folders", headers: ["Authorization: Basic " + Data("reader:secret words".utf8).base64EncodedString()])
        XCTAssertTrue(feed.text.contains("pse:lastRead=\"1\""), "and so does the catalog (PSE counts from 0): \(feed.text)")
        // Read on through the mount: pages 4 and 5. KOReader's next pull finds it at 5, from no device of its own.
        _ = try readFile(mount.path("Moon Tales 02/004.jpg"))
        _ = try readFile(mount.path("Moon Tales 02/005.jpg"))
        let pulled = try XCTUnwrap(waitUntil(5) {
            ((try? self.object(self.server.get("/syncs/progress/\(document)", headers: self.koreader)))?["progress"] as? String) == "5"
        } ? try object(server.get("/syncs/progress/\(document)", headers: koreader)) : nil, "the mount's read reaches KOReader")
        XCTAssertEqual(pulled["device"] as? String, "inkyfs")
        XCTAssertEqual(pulled["percentage"] as? Double, 0.8333)
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testTheComicsOwnFileIsKnownByItsDigestToo() throws {
        try register()
        let cbz = try downloadedCBZDigest()
        // KOReader opening the original .cbt (copied over by hand) names it by the file's digest.
        let original = try XCTUnwrap(PartialMD5.python([server.library.appendingPathComponent("Moon Tales 02.cbt").path]).first)
        let push = "{\"document\":\"\(original)\",\"progress\":\"3\",\"percentage\":0.5,\"device\":\"Kobo Clara HD\",\"device_id\":\"A1B2C3\"}"
        XCTAssertEqual(try server.get("/syncs/progress", headers: koreader, method: "PUT", body: push).status, 200)
        let pulled = try object(server.get("/syncs/progress/\(cbz)", headers: koreader))
        XCTAssertEqual(pulled["progress"] as? String, "3", "one comic, one reading state, whichever file KOReader opened")
        XCTAssertEqual(pulled["document"] as? String, cbz)
    }
}

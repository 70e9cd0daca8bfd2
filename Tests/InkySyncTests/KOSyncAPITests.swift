import Foundation
import InkyCore
import InkyStore
import InkyVault
import XCTest
@testable import InkySync

/// KOReader's sync protocol over typed requests, as its plugin (kosync.koplugin) makes them and
/// its reference server answers: every status and body shape, the account checks, and progress
/// landing in the reading state the mount keeps.
final class KOSyncAPITests: XCTestCase {
    private var folder: URL!
    private var state: StateDatabase!
    private let comicDigest = "0123456789abcdef0123456789abcdef"
    private var comicFile: LibraryFile { LibraryFile(path: folder.appendingPathComponent("Issue 1.cbz").path) }
    private let key = "5ebe2294ecd0e0f08eab7690d2a6ee69" // md5("secret"), as KOReader sends it

    override func setUp() {
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("kosync-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        state = StateDatabase.open(at: folder.appendingPathComponent("state.sqlite").path)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func api(registration: Bool = false, throttle: LoginThrottle = LoginThrottle(), at date: Date = Date(timeIntervalSince1970: 1_750_000_000)) -> KOSyncAPI {
        let file = comicFile, digest = comicDigest
        return KOSyncAPI(state: state, authenticator: Authenticator(state: state, throttle: throttle), allowRegistration: registration,
                         documents: { $0 == digest ? SyncDocument(file: file, pageCount: 20) : nil }, clock: { date })
    }

    private func addAccount(_ name: String = "reader") throws {
        let made = try AccountKey.make(syncKey: Array(key.utf8), iterations: 1_000)
        XCTAssertTrue(try state.addAccount(StoredAccount(name: name, iterations: Int(made.iterations), salt: made.salt, hash: made.hash)))
    }

    /// The body as canonical JSON text (keys sorted), to compare with what a test expects.
    private func json(_ response: KOSyncResponse?) throws -> String {
        let body = try XCTUnwrap(response).body
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], String(decoding: body, as: UTF8.self))
        return canonical(object)
    }

    private func canonical(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    private func code(_ response: KOSyncResponse?) throws -> Int? {
        let body = try XCTUnwrap(response).body
        return (try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["code"] as? Int
    }

    private func body(_ fields: [String: Any]) -> [UInt8] { [UInt8](try! JSONSerialization.data(withJSONObject: fields)) }

    func testRegistrationAsKOReaderDoesIt() throws {
        let request = body(["username": "reader", "password": key])
        let refused = api().respond(method: "POST", path: "/users/create", user: nil, key: nil, body: request, from: "192.0.2.1")
        XCTAssertEqual(refused?.status, 403)
        XCTAssertEqual(try json(refused), canonical(["code": 2005, "message": "User registration is disabled."]))

        let open = api(registration: true)
        let created = open.respond(method: "POST", path: "/users/create", user: nil, key: nil, body: request, from: "192.0.2.1")
        XCTAssertEqual(created?.status, 201)
        XCTAssertEqual(try json(created), canonical(["username": "reader"]))
        let stored = try XCTUnwrap(try state.account("reader"))
        XCTAssertEqual(stored.iterations, Int(AccountKey.defaultIterations))
        XCTAssertFalse(stored.hash.isEmpty)

        let taken = api(registration: true).respond(method: "POST", path: "/users/create", user: nil, key: nil, body: request, from: "192.0.2.2")
        XCTAssertEqual(taken?.status, 402)
        XCTAssertEqual(try json(taken), canonical(["code": 2002, "message": "Username is already registered."]))
        let bad = api(registration: true).respond(method: "POST", path: "/users/create", user: nil, key: nil,
                                                  body: body(["username": "a:b", "password": key]), from: "192.0.2.3")
        XCTAssertEqual(bad?.status, 403)
        XCTAssertEqual(try json(bad), canonical(["code": 2003, "message": "Invalid request"]))

        let login = api().respond(method: "GET", path: "/users/auth", user: "reader", key: key, body: [], from: "192.0.2.4")
        XCTAssertEqual(login?.status, 200)
        XCTAssertEqual(try json(login), canonical(["authorized": "OK"]))
    }

    func testEveryRequestNeedsTheAccountsKey() throws {
        try addAccount()
        for (user, key) in [("reader", "0" + String(self.key.dropFirst())), ("nobody", self.key), ("reader", ""), ("", self.key)] {
            // A fresh throttle each: a failure holds the address back (LoginThrottleTests).
            let response = api().respond(method: "GET", path: "/users/auth", user: user, key: key, body: [], from: "192.0.2.1")
            XCTAssertEqual(response?.status, 401, "\(user) \(key)")
            XCTAssertEqual(try json(response), canonical(["code": 2001, "message": "Unauthorized"]))
        }
        let api = api()
        let missing = api.respond(method: "GET", path: "/syncs/progress/\(comicDigest)", user: nil, key: nil, body: [], from: "198.51.100.1")
        XCTAssertEqual(missing?.status, 401)
        let push = self.api().respond(method: "PUT", path: "/syncs/progress", user: "reader", key: "wrong", body: body(["document": comicDigest]), from: "198.51.100.2")
        XCTAssertEqual(push?.status, 401)
        XCTAssertNil(state.syncedProgress(comicFile), "nothing written without the account")
        XCTAssertNil(self.api().respond(method: "DELETE", path: "/syncs/progress", user: "reader", key: key, body: [], from: "198.51.100.3"),
                     "not the protocol's: the front end's 405")
    }

    func testRepeatedFailuresAreThrottledBeforeTheHashIsChecked() throws {
        try addAccount()
        let api = api()
        XCTAssertEqual(api.respond(method: "GET", path: "/users/auth", user: "reader", key: "wrong", body: [], from: "203.0.113.9")?.status, 401)
        let throttled = api.respond(method: "GET", path: "/users/auth", user: "reader", key: key, body: [], from: "203.0.113.9")
        XCTAssertEqual(throttled?.status, 429, "even the right key waits: a refusal tells nothing")
        XCTAssertEqual(throttled?.retryAfter, 1)
        XCTAssertEqual(try code(throttled), 2001)
    }

    func testProgressOfAComicMovesTheReadingStateAndComesBack() throws {
        try addAccount()
        let api = api()
        let nothing = api.respond(method: "GET", path: "/syncs/progress/\(comicDigest)", user: "reader", key: key, body: [], from: "192.0.2.1")
        XCTAssertEqual(nothing?.status, 200)
        XCTAssertEqual(try json(nothing), canonical([:]), "KOReader: no progress found for this document")

        // What KOReaderSync:updateProgress sends for page 7 of 20 of a paged document.
        let push = api.respond(method: "PUT", path: "/syncs/progress", user: "reader", key: key, body: body([
            "document": comicDigest, "progress": "7", "percentage": 0.35, "device": "Kobo Clara", "device_id": "ABC123"]), from: "192.0.2.1")
        XCTAssertEqual(push?.status, 200)
        XCTAssertEqual(try json(push), canonical(["document": comicDigest, "timestamp": 1_750_000_000]))
        let synced = try XCTUnwrap(state.syncedProgress(comicFile))
        XCTAssertEqual(synced.progress.lastPage, 6)
        XCTAssertEqual(synced.progress.pageCount, 20)
        XCTAssertEqual(state.progress().map(\.path), [comicFile.path], "in progress, as `inkyfs progress` and Continue Reading/ show it")

        let pulled = api.respond(method: "GET", path: "/syncs/progress/\(comicDigest)", user: "reader", key: key, body: [], from: "192.0.2.1")
        XCTAssertEqual(try json(pulled), canonical(["document": comicDigest, "progress": "7", "percentage": 0.35, "device": "Kobo Clara",
                                                    "device_id": "ABC123", "timestamp": 1_750_000_000]))

        // Read on through the mount (or `inkyfs progress set`): no device's progress any more.
        try state.setProgress(comicFile.path, page: 11, pageCount: 20, at: Date(timeIntervalSince1970: 1_750_000_100))
        let after = api.respond(method: "GET", path: "/syncs/progress/\(comicDigest)", user: "reader", key: key, body: [], from: "192.0.2.1")
        XCTAssertEqual(try json(after), canonical(["document": comicDigest, "progress": "12", "percentage": 0.6, "device": "inkyfs",
                                                   "device_id": "inkyfs", "timestamp": 1_750_000_100]))
    }

    func testOtherDocumentsAreKeptAsSentPerAccount() throws {
        try addAccount()
        try addAccount("other")
        let api = api()
        let book = "fedcba9876543210fedcba9876543210"
        let push = api.respond(method: "PUT", path: "/syncs/progress", user: "reader", key: key, body: body([
            "document": book, "progress": "/body/DocFragment[12]/body/p[3]/text().0", "percentage": 0.4213,
            "device": "Kobo Clara", "device_id": "ABC123"]), from: "192.0.2.1")
        XCTAssertEqual(push?.status, 200)
        let pulled = api.respond(method: "GET", path: "/syncs/progress/\(book)", user: "reader", key: key, body: [], from: "192.0.2.1")
        XCTAssertEqual(try json(pulled), canonical(["document": book, "progress": "/body/DocFragment[12]/body/p[3]/text().0", "percentage": 0.4213,
                                                    "device": "Kobo Clara", "device_id": "ABC123", "timestamp": 1_750_000_000]))
        let elsewhere = api.respond(method: "GET", path: "/syncs/progress/\(book)", user: "other", key: key, body: [], from: "192.0.2.1")
        XCTAssertEqual(try json(elsewhere), canonical([:]), "another account's books are its own")
        XCTAssertTrue(state.progress(includeFinished: true).isEmpty, "no comic's reading state moved")
    }

    func testMalformedPushesSayWhich() throws {
        try addAccount()
        let api = api()
        for (fields, status, code) in [([String: Any](), 403, 2004), (["document": "a:b"], 403, 2004),
                                       (["document": comicDigest, "progress": "3"], 403, 2003),
                                       (["document": comicDigest, "percentage": 0.1, "device": "x"], 403, 2003)] as [([String: Any], Int, Int)] {
            let response = api.respond(method: "PUT", path: "/syncs/progress", user: "reader", key: key, body: body(fields), from: "192.0.2.1")
            XCTAssertEqual(response?.status, status, "\(fields)")
            XCTAssertEqual(try self.code(response), code, "\(fields)")
        }
        let garbage = api.respond(method: "PUT", path: "/syncs/progress", user: "reader", key: key, body: Array("{not json".utf8), from: "192.0.2.1")
        XCTAssertEqual(garbage?.status, 403)
    }

    func testPageTranslation() {
        XCTAssertEqual(SyncPage.page(progress: "1", percentage: 0.05, pageCount: 20), 0)
        XCTAssertEqual(SyncPage.page(progress: "20", percentage: 1, pageCount: 20), 19)
        XCTAssertEqual(SyncPage.page(progress: "25", percentage: 0.5, pageCount: 20), 9, "not a page of this comic: the percentage decides")
        XCTAssertEqual(SyncPage.page(progress: "/body/p[1]", percentage: 0.25, pageCount: 20), 4)
        XCTAssertEqual(SyncPage.percentage(page: 0, pageCount: 3), 0.3333, "floored to 4 decimals, as Math.roundPercent")
    }
}

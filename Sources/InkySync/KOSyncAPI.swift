import Foundation
import InkyCore
import InkyStore
import InkyVault

/// A comic as the sync protocol needs it: where its reading state lives and how many pages it has.
public struct SyncDocument: Sendable, Equatable {
    public var file: LibraryFile
    public var pageCount: Int

    public init(file: LibraryFile, pageCount: Int) {
        self.file = file
        self.pageCount = pageCount
    }
}

/// What the sync API answers: a status and a JSON body, as KOReader's sync server (gin) does.
public struct KOSyncResponse: Sendable, Equatable {
    public let status: Int
    public let body: [UInt8]
    /// Seconds, for a `Retry-After` header (a throttled login).
    public let retryAfter: Int?

    /// What KOReader's client (lua-Spore's Format.JSON) decodes: it asks with `Accept:
    /// application/vnd.koreader.v1+json` (its server's API version), but newer Spore decodes a
    /// body only when the response says `application/json`, as the reference server's does.
    public static let contentType = "application/json"
}

/// KOReader's progress sync protocol (plugins/kosync.koplugin: api.json, KOSyncClient.lua, and
/// its reference server, koreader-sync-server), over typed requests: the HTTP front end hands
/// every request here and sends back what it returns.
///
/// - `POST /users/create` {username, password: md5hex}: 201 {username}; 402 code 2002 when the name
///   is taken; 403 code 2003 for a bad field; 403 code 2005 unless the server allows registration.
/// - `GET /users/auth` with `x-auth-user`, `x-auth-key` (md5hex of the password): 200 {authorized: "OK"}.
/// - `PUT /syncs/progress` {document, progress: String, percentage: Number, device, device_id}:
///   200 {document, timestamp}; 403 code 2004 without a document, 2003 without the rest.
/// - `GET /syncs/progress/:document`: 200 {document, percentage, progress, device, device_id,
///   timestamp}, or 200 {} when nothing is known.
/// - A missing or wrong account: 401 code 2001; too many failures: 429 with `Retry-After`.
///
/// A document that is a comic of the library (found by its digest) moves the one reading state
/// the mount keeps: `progress` is KOReader's page number (from 1) in the CBZ or file it opened,
/// whose pages are the comic's in order. Any other document (a book KOReader reads from
/// elsewhere) is kept per account as sent, so the account's devices still sync it.
public struct KOSyncAPI: Sendable {
    let state: StateDatabase
    let authenticator: Authenticator
    let allowRegistration: Bool
    let documents: @Sendable (String) -> SyncDocument?
    let clock: @Sendable () -> Date

    public init(state: StateDatabase, authenticator: Authenticator, allowRegistration: Bool,
                documents: @escaping @Sendable (String) -> SyncDocument?, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.state = state
        self.authenticator = authenticator
        self.allowRegistration = allowRegistration
        self.documents = documents
        self.clock = clock
    }

    /// The paths this API answers (the front end routes them here, and guards them with no
    /// HTTP Basic: the protocol carries its own account headers).
    public static func handles(_ path: String) -> Bool {
        ["/users/create", "/users/auth", "/syncs/progress", "/healthcheck"].contains(path) || path.hasPrefix("/syncs/progress/")
    }

    /// The answer to one request; nil for a path or method that is not the protocol's (a 404 or
    /// 405 of the front end's). `user` and `key` are the `x-auth-user` and `x-auth-key` headers.
    public func respond(method: String, path: String, user: String?, key: String?, body: [UInt8], from address: String) -> KOSyncResponse? {
        switch (method, path) {
        case ("POST", "/users/create"): return register(body, from: address)
        case ("GET", "/healthcheck"): return Self.json(200, ["state": "OK"])
        case ("GET", "/users/auth"), ("PUT", "/syncs/progress"): break
        case ("GET", _) where path.hasPrefix("/syncs/progress/"): break
        default: return nil
        }
        let account: String
        switch authenticator.check(user: user, key: key, from: address) {
        case .granted(let name): account = name
        case .denied: return Self.error(401, 2001, "Unauthorized")
        case .throttled(let seconds):
            return KOSyncResponse(status: 429, body: Self.encode(["code": 2001, "message": "Too many failed logins; try again in \(seconds) s"]),
                                  retryAfter: seconds)
        }
        if path == "/users/auth" { return Self.json(200, ["authorized": "OK"]) }
        if method == "PUT" { return update(body, account: account) }
        let document = String(path.dropFirst("/syncs/progress/".count)).removingPercentEncoding ?? ""
        return progress(of: document, account: account)
    }

    private func register(_ body: [UInt8], from address: String) -> KOSyncResponse {
        guard allowRegistration else { return Self.error(403, 2005, "User registration is disabled.") }
        let wait = authenticator.throttle.wait([.registration(address)])
        if wait > 0 {
            let seconds = Int(wait.rounded(.up))
            return KOSyncResponse(status: 429, body: Self.encode(["code": 2003, "message": "Too many requests; try again in \(seconds) s"]),
                                  retryAfter: seconds)
        }
        let fields = Self.object(body)
        guard let name = fields?["username"] as? String, AccountNames.problem(with: name) == nil,
              let password = fields?["password"] as? String, !password.isEmpty else { return Self.error(403, 2003, "Invalid request") }
        guard let key = try? AccountKey.make(syncKey: Array(password.utf8)) else { return Self.error(503, 2000, "Unknown server error.") }
        // Each account made costs a slow hash: made one after another from one address, they slow down.
        authenticator.throttle.failed([.registration(address)])
        let stored = StoredAccount(name: name, iterations: Int(key.iterations), salt: key.salt, hash: key.hash, createdAt: clock())
        switch Result(catching: { () throws(SQLiteError) in try state.addAccount(stored) }) {
        case .success(true): return Self.json(201, ["username": name])
        case .success(false): return Self.error(402, 2002, "Username is already registered.")
        case .failure: return Self.error(503, 2000, "Unknown server error.")
        }
    }

    private func update(_ body: [UInt8], account: String) -> KOSyncResponse {
        let fields = Self.object(body)
        guard let document = fields?["document"] as? String, Self.isDocument(document) else {
            return Self.error(403, 2004, "Field 'document' not provided.")
        }
        guard let progress = fields?["progress"] as? String, let percentage = Self.number(fields?["percentage"]),
              let device = fields?["device"] as? String, !device.isEmpty else { return Self.error(403, 2003, "Invalid request") }
        let deviceID = fields?["device_id"] as? String
        let now = clock()
        let timestamp = Int64(now.timeIntervalSince1970)
        do throws(SQLiteError) {
            if let comic = documents(document) {
                let page = SyncPage.page(progress: progress, percentage: percentage, pageCount: comic.pageCount)
                try state.recordSyncedProgress(comic.file, page: page, pageCount: comic.pageCount, device: device, deviceID: deviceID, at: now)
            } else {
                try state.storeForeignProgress(account: account, document: document, ForeignProgress(
                    progress: progress, percentage: percentage, device: device, deviceID: deviceID, timestamp: timestamp))
            }
        } catch {
            return Self.error(503, 2000, "Unknown server error.")
        }
        return Self.json(200, ["document": document, "timestamp": timestamp])
    }

    private func progress(of document: String, account: String) -> KOSyncResponse {
        guard Self.isDocument(document) else { return Self.error(403, 2004, "Field 'document' not provided.") }
        if let comic = documents(document) {
            guard let synced = state.syncedProgress(comic.file) else { return Self.json(200, [:]) }
            let page = min(synced.progress.lastPage, comic.pageCount - 1)
            return Self.json(200, [
                "document": document, "progress": String(page + 1),
                "percentage": SyncPage.percentage(page: page, pageCount: comic.pageCount),
                // Progress made through a mount or `inkyfs progress` is no device's: KOReader then
                // never takes it for its own.
                "device": synced.device ?? "inkyfs", "device_id": synced.deviceID ?? "inkyfs",
                "timestamp": Int64(synced.progress.updatedAt.timeIntervalSince1970),
            ])
        }
        guard let kept = state.foreignProgress(account: account, document: document) else { return Self.json(200, [:]) }
        var body: [String: any Sendable] = ["document": document, "progress": kept.progress, "percentage": kept.percentage,
                                            "device": kept.device, "timestamp": kept.timestamp]
        if let id = kept.deviceID { body["device_id"] = id }
        return Self.json(200, body)
    }

    /// KOReader's digests are hex; its server refuses colons (its keys are `user:x:document:y`).
    static func isDocument(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128 && text.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-" }
    }

    static func object(_ body: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    /// A JSON number, or a string holding one (the reference server takes `tonumber` of either).
    static func number(_ value: Any?) -> Double? {
        if let text = value as? String { return Double(text) }
        return value as? Double
    }

    static func error(_ status: Int, _ code: Int, _ message: String) -> KOSyncResponse {
        json(status, ["code": code, "message": message])
    }

    static func json(_ status: Int, _ body: [String: any Sendable]) -> KOSyncResponse {
        KOSyncResponse(status: status, body: encode(body), retryAfter: nil)
    }

    static func encode(_ body: [String: any Sendable]) -> [UInt8] {
        [UInt8]((try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8))
    }
}

/// KOReader's place in a paged document and the comic's page: `progress` is its page number
/// (from 1, as a string) and `percentage` page ÷ page count, floored to 4 decimals
/// (`Math.roundPercent`).
enum SyncPage {
    /// The 0-based page: from `progress` when it is a page number of the comic, else from the
    /// percentage (a reflowable document's progress is an XPointer, no page number).
    static func page(progress: String, percentage: Double, pageCount: Int) -> Int {
        let last = max(0, pageCount - 1)
        if let number = Int(progress.trimmingCharacters(in: .whitespaces)), (1...max(1, pageCount)).contains(number) { return min(number - 1, last) }
        guard percentage.isFinite else { return 0 }
        return min(last, max(0, Int((percentage * Double(pageCount)).rounded()) - 1))
    }

    static func percentage(page: Int, pageCount: Int) -> Double {
        guard pageCount > 0 else { return 0 }
        return (Double(page + 1) / Double(pageCount) * 10_000).rounded(.down) / 10_000
    }
}

import Foundation
import Hummingbird
import InkyCore
import InkyLibrary
import InkySync

/// Access with accounts (`inkyfs account`): KOReader's sync API, which checks its own headers,
/// and HTTP Basic before every other route while any account exists. Without one, the catalog is
/// served to anyone on loopback (`ServeAccess.check` refuses any other address), and the sync API
/// still needs an account, which `--allow-registration` lets KOReader make.
///
/// A wrong or missing login gets 401 with `WWW-Authenticate: Basic`; too many failures from one
/// address or for one account get 429 with `Retry-After`, without checking (`LoginThrottle`). A
/// request with no credentials at all is not counted: every client tries that first.
public struct AccountAccess: ServeAccess {
    let authenticator: Authenticator
    let allowRegistration: Bool

    public init(authenticator: Authenticator, allowRegistration: Bool) {
        self.authenticator = authenticator
        self.allowRegistration = allowRegistration
    }

    public var hasAccounts: Bool { authenticator.hasAccounts }

    /// The most a sync request's body may hold: KOReader's are a few hundred bytes.
    static let bodyLimit = 64 << 10

    public func install(on router: Router<ServeContext>, reader: LibraryReader) {
        // Added before the Basic check: these carry the protocol's own account headers.
        let sync = KOSyncAPI(state: authenticator.state, authenticator: authenticator, allowRegistration: allowRegistration) { digest in
            reader.koreaderDocument(digest).map { SyncDocument(file: $0.file, pageCount: $0.pageCount) }
        }
        let answer: @Sendable (Request, ServeContext) async throws -> Response = { request, context in
            let body = try await request.body.collect(upTo: Self.bodyLimit)
            let address = context.clientAddress
            let user = request.headers[.init("x-auth-user")!], key = request.headers[.init("x-auth-key")!]
            let method = request.method.rawValue, path = request.uri.path
            // The slow hash and the database are off the event loop.
            guard let response = await OffLoop.run({ sync.respond(method: method, path: path, user: user, key: key,
                                                                  body: Array(buffer: body), from: address) }) else {
                throw HTTPError(.notFound)
            }
            return Self.response(response)
        }
        router.post("/users/create", use: answer)
        router.get("/users/auth", use: answer)
        router.put("/syncs/progress", use: answer)
        router.get("/syncs/progress/:document", use: answer)
        router.get("/healthcheck", use: answer)
        router.add(middleware: BasicLogin(authenticator: authenticator))
        router.add(middleware: DigestOnDownload(reader: reader))
    }

    static func response(_ answer: KOSyncResponse) -> Response {
        var headers: HTTPFields = [.contentType: KOSyncResponse.contentType]
        if let seconds = answer.retryAfter { headers[.retryAfter] = String(seconds) }
        return Response(status: HTTPResponse.Status(code: answer.status), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}

/// HTTP Basic before every route added after it, while any account exists.
struct BasicLogin: RouterMiddleware {
    typealias Context = ServeContext
    let authenticator: Authenticator

    static let challenge = "Basic realm=\"inkyfs\", charset=\"UTF-8\""

    func handle(_ request: Request, context: ServeContext, next: (Request, ServeContext) async throws -> Response) async throws -> Response {
        let authenticator = authenticator
        guard await OffLoop.run({ authenticator.hasAccounts }) else { return try await next(request, context) }
        guard let header = request.headers[.authorization] else { return Self.refusal(.unauthorized, "a login is needed") }
        let address = context.clientAddress
        switch await OffLoop.run({ authenticator.check(basic: header, from: address) }) {
        case .granted: return try await next(request, context)
        case .denied: return Self.refusal(.unauthorized, "wrong name or password")
        case .throttled(let seconds):
            var response = Self.refusal(.tooManyRequests, "too many failed logins; try again in \(seconds) s")
            response.headers[.retryAfter] = String(seconds)
            return response
        }
    }

    static func refusal(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
        if status == .unauthorized { headers[.wwwAuthenticate] = challenge }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}

/// After a comic's CBZ was served, its KOReader digest is made (off the request, once per version
/// of the comic): the KOReader that downloaded it names it by that digest when it syncs.
struct DigestOnDownload: RouterMiddleware {
    typealias Context = ServeContext
    let reader: LibraryReader

    func handle(_ request: Request, context: ServeContext, next: (Request, ServeContext) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        guard request.uri.path == "/opds/comic/cbz", [.ok, .partialContent].contains(response.status),
              let path = QueryValues(request.uri.query)["path"] else { return response }
        let reader = reader
        Task.detached(priority: .background) {
            await OffLoop.run { if let comic = reader.comic(at: path) { reader.digestServedCBZ(comic) } }
        }
        return response
    }
}

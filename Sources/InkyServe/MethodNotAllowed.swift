import Hummingbird

/// 405 Method Not Allowed, with the methods the path takes in `Allow`, for a request whose path
/// is served but not with its method (a `DELETE /opds`): a 404 there told a client the catalog
/// was not there at all. Any other request it passes on. Added after every route, so it wraps
/// only the router's not-found answer, behind the access checks (a stranger still gets 401).
struct MethodNotAllowed<Context: RequestContext>: RouterMiddleware {
    let routes: [(path: RouterPath, method: HTTPRequest.Method)]

    init(_ routes: [Router<Context>.RouteDescription]) {
        self.routes = routes.map { ($0.path, $0.method) }
    }

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let segments = request.uri.path.split(separator: "/")
        var allowed = Set(routes.filter { route in
            route.path.count == segments.count && zip(route.path, segments).allSatisfy { $0 ~= $1 }
        }.map(\.method.rawValue))
        // The router answers HEAD for every GET without listing it among its routes.
        if allowed.contains("GET") { allowed.insert("HEAD") }
        guard !allowed.isEmpty, !allowed.contains(request.method.rawValue) else { return try await next(request, context) }
        return Response(status: .methodNotAllowed, headers: [.allow: allowed.sorted().joined(separator: ", ")])
    }
}

import Foundation
import Hummingbird
import HummingbirdCore
import InkyCore
import InkyLibrary
import InkyTLS
import Logging

/// `inkyfs serve`: the library over HTTP, the second front end of the library core beside the
/// mount. It needs no mount and no node number: everything goes through `LibraryReader`.
public enum InkyServer {
    /// Bounds on what a request may send before it is refused (431 or a closed connection):
    /// far above any real client's, far below what would cost the server.
    static let decoder = HTTP1Channel.Configuration.DecoderConfiguration(maxHeaderFieldSize: 16 << 10, maxHeaderListSize: 32 << 10,
                                                                        maxHeaderFieldCount: 100)

    /// Every route: first what `access` installs (its checks guard all that follows), then the
    /// catalog and the comics. HEAD is answered for every GET.
    public static func router(reader: LibraryReader, access: any ServeAccess) -> Router<ServeContext> {
        let router = Router(context: ServeContext.self, options: .autoGenerateHeadEndpoints)
        access.install(on: router, reader: reader)
        CatalogRoutes.install(on: router, catalog: OPDSCatalog(reader: reader))
        ComicRoutes.install(on: router, reader: reader)
        WebReader.install(on: router, reader: reader)
        router.add(middleware: MethodNotAllowed(router.routes))
        return router
    }

    /// Serves until SIGINT or SIGTERM, then stops accepting, lets requests in flight end and
    /// returns. With `tls`, every connection is HTTPS (a failed handshake is logged and costs
    /// that connection only). `ready` gets the server's URL once it listens (with the port the
    /// system chose for port 0). Throws `ServeRefusal` for an address `access` does not allow,
    /// or the binding's error (an address in use).
    public static func run(reader: LibraryReader, address: ListenAddress, access: any ServeAccess, tls: TLSServerContext? = nil,
                           ready: @escaping @Sendable (String) -> Void) async throws {
        try access.check(address)
        var logger = Logger(label: "inkyfs.serve")
        logger.logLevel = .error
        let http1 = HTTP1Channel.Configuration(idleTimeout: .seconds(120), httpDecoderConfiguration: decoder)
        var server = HTTPServerBuilder.http1(configuration: http1)
        if let tls {
            // A connection whose handshake stalls is closed by HTTP/1.1's idle timeout, as an idle one is.
            let tlsLogger = Logger(label: "inkyfs.tls")
            server = HTTPServerBuilder { responder in
                TLSServerChannel(HTTP1Channel(responder: responder, configuration: http1), context: tls, logger: tlsLogger)
            }
        }
        let scheme = tls == nil ? "http" : "https"
        let app = Application(router: router(reader: reader, access: access),
                              server: server,
                              configuration: ApplicationConfiguration(address: .hostname(address.host, port: address.port),
                                                                      serverName: "inkyfs"),
                              onServerRunning: { channel in
                                  let port = channel.localAddress?.port ?? address.port
                                  ready("\(scheme)://\(address.urlHost):\(port)/opds")
                              },
                              logger: logger)
        try await app.runService()
    }
}

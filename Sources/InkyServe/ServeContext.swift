import Hummingbird

/// What every route of the server is handed: Hummingbird's basic context and the client's
/// address, which the login throttle counts failures by (`AccountAccess`).
public struct ServeContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's IP address as text; one key for all clients whose address is unknown.
    let clientAddress: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}

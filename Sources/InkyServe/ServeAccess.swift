import Foundation
import Hummingbird
import InkyCore
import InkyLibrary

/// Who may use the server: the hook accounts plug into. With no account anyone who reaches the
/// port reads the library, so `inkyfs serve` listens on a loopback address only; an
/// implementation that holds accounts installs its checks (HTTP Basic, the sync protocol's own
/// headers) on the router before any catalog route is added, so they guard every route.
public protocol ServeAccess: Sendable {
    /// Whether any account exists. Without one, a non-loopback address is refused.
    var hasAccounts: Bool { get }
    /// Called once, before the catalog's routes are added: middleware added here runs before
    /// every route added after it (Hummingbird binds middleware as routes are added), and routes
    /// added here (a sync API) are served beside the catalog's, with the library to reach
    /// comics and their reading state by.
    func install(on router: Router<ServeContext>, reader: LibraryReader)
}

/// No accounts: every request is served, on loopback only.
public struct NoAccounts: ServeAccess {
    public init() {}
    public var hasAccounts: Bool { false }
    public func install(on router: Router<ServeContext>, reader: LibraryReader) {}
}

/// Why the server would not start.
public enum ServeRefusal: Error, Equatable, CustomStringConvertible {
    /// A non-loopback address with no account: the library would be open to the network.
    case openToNetwork(ListenAddress)

    public var description: String {
        switch self {
        case .openToNetwork(let address):
            "refusing to listen on \(address) with no account: anyone on the network could read the library. "
                + "Listen on loopback (the default, \(ListenAddress.standard)), or add an account first"
        }
    }
}

extension ServeAccess {
    /// Refuses a non-loopback address unless accounts guard it.
    public func check(_ address: ListenAddress) throws(ServeRefusal) {
        if !address.isLoopback && !hasAccounts { throw .openToNetwork(address) }
    }
}

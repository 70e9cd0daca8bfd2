import Foundation

/// Where `inkyfs serve` listens: `ADDR:PORT`, `[v6]:PORT`, or a bare port (loopback). Here, not in
/// the server's module, so that `inkyfs serve` checks `--listen` before it starts the server's executable.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    /// The address a server listens on when none is given: loopback, port 8190.
    public static let standard = ListenAddress(host: "127.0.0.1", port: 8190)

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `127.0.0.1:8190`, `[::1]:8190`, `0.0.0.0:80` or `8190`; nil for anything else.
    public init?(parsing text: String) {
        var host = Self.standard.host
        var portText = Substring(text)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = text[text.index(close, offsetBy: 2)...]
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65_535).contains(port), Self.isNumeric(host) || host == "localhost" else { return nil }
        self.init(host: host, port: port)
    }

    /// Only addresses, never names to resolve (a name could resolve to anything).
    private static func isNumeric(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// 127.0.0.0/8, ::1 and `localhost`: reachable from this machine only.
    public var isLoopback: Bool {
        if host == "localhost" || host == "::1" { return true }
        var v4 = in_addr()
        guard inet_pton(AF_INET, host, &v4) == 1 else { return false }
        return UInt32(bigEndian: v4.s_addr) >> 24 == 127
    }

    /// How a URL names the host: an IPv6 address in brackets.
    public var urlHost: String { host.contains(":") ? "[\(host)]" : host }

    public var description: String { "\(urlHost):\(port)" }
}

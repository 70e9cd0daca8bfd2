import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// systemd's readiness protocol (sd_notify(3)) without libsystemd: one datagram of
/// `KEY=value` lines to the unix socket named by `$NOTIFY_SOCKET`, which a `Type=notify`
/// unit sets. A name starting with '@' is in the abstract namespace. Without the variable
/// nothing is sent, so a mount outside systemd behaves the same.
public enum SystemdNotify {
    /// Sends `state` (e.g. "READY=1"); returns false when there is no socket or it failed,
    /// which the daemon ignores: readiness is a courtesy, never a reason to stop serving.
    @discardableResult
    public static func send(_ state: String,
                            socketName: String? = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"]) -> Bool {
        guard let socketName, socketName.hasPrefix("/") || socketName.hasPrefix("@"),
              let (address, length) = address(socketName) else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var target = address
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &target) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
            }
        }
        return sent == bytes.count
    }

    /// The socket address and its length: an abstract name has no terminating NUL and its
    /// length counts only the bytes of the name (with the leading NUL that replaces '@').
    static func address(_ name: String) -> (sockaddr_un, socklen_t)? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2
        return (address, socklen_t(pathOffset + bytes.count + (abstract ? 0 : 1)))
    }
}

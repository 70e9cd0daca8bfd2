import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The receiving end of systemd's notify protocol, as systemd itself opens it: a unix
/// datagram socket, bound to a file path or (name starting with '@') an abstract name.
public final class NotifySocket {
    /// What goes into NOTIFY_SOCKET.
    public let name: String
    private let fd: Int32

    public init(abstract: Bool = false) throws {
        let unique = "inkyfs-notify-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        name = abstract ? "@" + unique : FileManager.default.temporaryDirectory.appendingPathComponent(unique).path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    deinit {
        close(fd)
        if !name.hasPrefix("@") { unlink(name) }
    }

    /// The next datagram as text, or nil if none arrives within `timeout` seconds.
    public func receive(timeout: Double) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count < 0 ? nil : String(decoding: buffer[..<count], as: UTF8.self)
    }
}

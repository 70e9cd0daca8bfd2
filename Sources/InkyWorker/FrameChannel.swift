import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Blocking frame I/O over one end of a socketpair. Owns the descriptor.
final class FrameChannel {
    enum Failure: Error, Equatable {
        /// The peer closed its end (exited or crashed).
        case closed
        /// Nothing arrived within the deadline.
        case timedOut
        /// The peer sent something that is not a frame.
        case malformed
        case io(Int32)
    }

    let fd: Int32

    init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }

    func send(_ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw errno == EPIPE || errno == ECONNRESET ? .closed : .io(errno)
            }
            sent += result
        }
    }

    /// The next frame; waits at most `timeout` seconds for each piece of it (nil: forever).
    func receive(timeout: Double?) throws(Failure) -> WorkerFrame {
        guard let header = WorkerFrame.parseHeader(try read(count: 5, timeout: timeout)) else { throw .malformed }
        let payload = try read(count: header.length, timeout: timeout)
        return header.kind == 1 ? .message(Data(payload)) : .data(payload)
    }

    private func read(count: Int, timeout: Double?) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            if let timeout {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, Int32(max(1, timeout * 1000)))
                if ready == 0 { throw .timedOut }
                if ready < 0 {
                    if errno == EINTR { continue }
                    throw .io(errno)
                }
            }
            let got = buffer.withUnsafeMutableBytes { raw in
                recv(fd, raw.baseAddress! + filled, count - filled, 0)
            }
            if got == 0 { throw .closed }
            if got < 0 {
                if errno == EINTR { continue }
                throw errno == ECONNRESET ? .closed : .io(errno)
            }
            filled += got
        }
        return buffer
    }
}

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
    /// With a `deadline` the whole frame must have arrived by then, however it trickles in,
    /// and a header announcing more than `maxLength` bytes is malformed before anything is read.
    func receive(timeout: Double?, deadline: DispatchTime? = nil, maxLength: Int = WorkerFrame.maxLength) throws(Failure) -> WorkerFrame {
        guard let header = WorkerFrame.parseHeader(try read(count: 5, timeout: timeout, deadline: deadline)),
              header.length <= maxLength else { throw .malformed }
        let payload = try read(count: header.length, timeout: timeout, deadline: deadline)
        return header.kind == 1 ? .message(Data(payload)) : .data(payload)
    }

    /// Ends sending, then reads and drops what the peer still sends until it closes, for at
    /// most `seconds` and `limit` bytes, so what was sent is not lost to a connection reset.
    func drain(for seconds: Double, upTo limit: Int) {
        shutdown(fd, Int32(SHUT_WR))
        let deadline = DispatchTime.now() + seconds
        var dropped = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while dropped < limit {
            let left = Double(Int64(bitPattern: deadline.uptimeNanoseconds &- DispatchTime.now().uptimeNanoseconds)) / 1e9
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&poller, 1, Int32(max(1, left * 1000))) > 0 else { return }
            let got = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if got <= 0 { return }
            dropped += got
        }
    }

    private func read(count: Int, timeout: Double?, deadline: DispatchTime?) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            var wait = timeout
            if let deadline {
                let left = Double(Int64(bitPattern: deadline.uptimeNanoseconds &- DispatchTime.now().uptimeNanoseconds)) / 1e9
                if left <= 0 { throw .timedOut }
                wait = min(wait ?? left, left)
            }
            if let timeout = wait {
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

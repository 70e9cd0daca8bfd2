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
    /// Where data payloads land in `receive(timeout:_:)`: one buffer for the channel's life, so
    /// a page's chunks cost no allocation, zero-fill or page fault each.
    private var scratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    /// A frame lent to a handler: `data` points into the channel's buffer, valid only during the call.
    enum BorrowedFrame {
        case message(Data)
        case data(UnsafeRawBufferPointer)
    }

    init(fd: Int32) { self.fd = fd }
    deinit {
        close(fd)
        scratch.deallocate()
    }

    /// Sends a data frame straight from `payload`: header and bytes in one writev, no copy into
    /// a frame first. (SIGPIPE must be ignored by the caller: writev has no MSG_NOSIGNAL.)
    func sendData(_ payload: UnsafeRawBufferPointer) throws(Failure) {
        var header = WorkerFrame.header(length: payload.count, kind: 2)
        var sent = 0
        let total = header.count + payload.count
        while sent < total {
            let result = header.withUnsafeMutableBytes { head -> Int in
                var vectors: [iovec] = []
                if sent < head.count {
                    vectors.append(iovec(iov_base: head.baseAddress! + sent, iov_len: head.count - sent))
                }
                let bodySent = max(0, sent - head.count)
                if bodySent < payload.count {
                    vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: payload.baseAddress! + bodySent),
                                         iov_len: payload.count - bodySent))
                }
                return writev(fd, vectors, Int32(vectors.count))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw errno == EPIPE || errno == ECONNRESET ? .closed : .io(errno)
            }
            sent += result
        }
    }

    /// The next frame, lent to `body`: a data payload is read into the channel's own buffer
    /// instead of a new array. Waits at most `timeout` seconds for each piece (nil: forever).
    func receive(timeout: Double?, _ body: (BorrowedFrame) -> Void) throws(Failure) {
        guard let header = WorkerFrame.parseHeader(try read(count: 5, timeout: timeout)) else { throw .malformed }
        guard header.kind == 2 else {
            body(.message(Data(try read(count: header.length, timeout: timeout))))
            return
        }
        if scratch.count < header.length {
            scratch.deallocate()
            scratch = .allocate(byteCount: max(header.length, WorkerFrame.chunkSize), alignment: 16)
        }
        let payload = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<header.length])
        try fill(payload, timeout: timeout)
        body(.data(UnsafeRawBufferPointer(payload)))
    }

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
        try buffer.withUnsafeMutableBytes { raw in Result { () throws(Failure) in try fill(raw, timeout: timeout) } }.get()
        return buffer
    }

    private func fill(_ buffer: UnsafeMutableRawBufferPointer, timeout: Double?) throws(Failure) {
        let count = buffer.count
        var filled = 0
        // With a deadline, take what is already there first and poll only when nothing is:
        // one system call per piece instead of two while a page streams in.
        var mustWait = false
        while filled < count {
            if let timeout, mustWait {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, Int32(max(1, timeout * 1000)))
                if ready == 0 { throw .timedOut }
                if ready < 0 {
                    if errno == EINTR { continue }
                    throw .io(errno)
                }
            }
            let got = recv(fd, buffer.baseAddress! + filled, count - filled, timeout == nil ? 0 : Int32(MSG_DONTWAIT))
            if got == 0 { throw .closed }
            if got < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    mustWait = true
                    continue
                }
                throw errno == ECONNRESET ? .closed : .io(errno)
            }
            mustWait = false
            filled += got
        }
    }
}

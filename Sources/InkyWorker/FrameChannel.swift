import Foundation
import InkyCore
#if canImport(Glibc)
import Glibc
#endif

/// Blocking frame I/O over one end of a socketpair. Owns the descriptor.
package final class FrameChannel {
    package enum Failure: Error, Equatable {
        /// The peer closed its end (exited or crashed).
        case closed
        /// Nothing arrived within the deadline.
        case timedOut
        /// The peer sent something that is not a frame.
        case malformed
        case io(Int32)
    }

    package let fd: Int32
    /// Where data payloads land in `receive(timeout:_:)`: one buffer for the channel's life, so
    /// a page's chunks cost no allocation, zero-fill or page fault each.
    private var scratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    /// A frame lent to a handler: `data` points into the channel's buffer, valid only during the call.
    package enum BorrowedFrame {
        case message(Data)
        case data(UnsafeRawBufferPointer)
        /// A `WorkerCodec` message, read into its own array as a JSON message is.
        case binary([UInt8])
    }

    /// Whether descriptors sent with frames are kept (a worker's end: each comic comes as one);
    /// at the daemon's end the kernel closes any a worker sends (its reads take no control data).
    private let acceptsDescriptors: Bool
    /// Descriptors received so far and not yet taken, in the order they were sent.
    private var received: [Int32] = []
    /// Where one `recvmsg` puts the descriptors it brings (one buffer, not one per read).
    private let control = UnsafeMutableRawBufferPointer.allocate(byteCount: SocketRights.space(FrameChannel.descriptorsPerSend), alignment: 8)

    package init(fd: Int32, acceptsDescriptors: Bool = false) {
        self.fd = fd
        self.acceptsDescriptors = acceptsDescriptors
    }
    deinit {
        close(fd)
        received.forEach { close($0) }
        scratch.deallocate()
        control.deallocate()
    }

    /// The descriptors that came with the frames read so far; the caller owns them now.
    package func takeDescriptors() -> [Int32] {
        defer { received.removeAll() }
        return received
    }

    /// Most descriptors one `sendmsg` carries (the kernel's limit is 253).
    package static let descriptorsPerSend = 250

    /// Sends `bytes` (whole frames) with `descriptors` attached (SCM_RIGHTS). More descriptors
    /// than one send carries ride on single bytes sent before the rest, a batch each, so `bytes`
    /// must hold at least one byte per batch. The peer owns copies; the caller still closes these.
    package func send(_ bytes: [UInt8], descriptors: [Int32]) throws(Failure) {
        guard !descriptors.isEmpty else { return try send(bytes) }
        let batches = stride(from: 0, to: descriptors.count, by: Self.descriptorsPerSend).map {
            Array(descriptors[$0..<min($0 + Self.descriptorsPerSend, descriptors.count)])
        }
        guard bytes.count >= batches.count else { throw .io(EINVAL) }
        var sent = 0
        for (index, batch) in batches.enumerated() {
            let end = index == batches.count - 1 ? bytes.count : sent + 1
            let result = bytes.withUnsafeBytes { raw in
                SocketRights.send(fd, UnsafeRawBufferPointer(rebasing: raw[sent..<end]), descriptors: batch)
            }
            if result < 0 {
                throw errno == EPIPE || errno == ECONNRESET ? .closed : .io(errno)
            }
            // A stream socket may take part of it: the descriptors went with the first byte.
            sent += result
        }
        if sent < bytes.count { try send(Array(bytes[sent...])) }
    }

    /// Sends a data frame straight from `payload`: header and bytes in one writev, no copy into
    /// a frame first. (SIGPIPE must be ignored by the caller: writev has no MSG_NOSIGNAL.)
    package func sendData(_ payload: UnsafeRawBufferPointer) throws(Failure) {
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
                return Syscall.retrying { writev(fd, vectors, Int32(vectors.count)) }
            }
            if result < 0 {
                throw errno == EPIPE || errno == ECONNRESET ? .closed : .io(errno)
            }
            sent += result
        }
    }

    /// The next frame, lent to `body`: a data payload is read into the channel's own buffer
    /// instead of a new array. Waits at most `timeout` seconds for each piece (nil: forever).
    package func receive(timeout: Double?, _ body: (BorrowedFrame) -> Void) throws(Failure) {
        guard let header = WorkerFrame.parseHeader(try read(count: 5, timeout: timeout)) else { throw .malformed }
        guard header.kind == 2 else {
            let payload = try read(count: header.length, timeout: timeout)
            body(header.kind == WorkerFrame.binaryKind ? .binary(payload) : .message(Data(payload)))
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

    package func send(_ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                Syscall.retrying { Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL)) }
            }
            if result < 0 {
                throw errno == EPIPE || errno == ECONNRESET ? .closed : .io(errno)
            }
            sent += result
        }
    }

    /// The next frame; waits at most `timeout` seconds for each piece of it (nil: forever).
    /// With a `deadline` the whole frame must have arrived by then, however it trickles in,
    /// and a header announcing more than `maxLength` bytes is malformed before anything is read.
    package func receive(timeout: Double?, deadline: DispatchTime? = nil, maxLength: Int = WorkerFrame.maxLength) throws(Failure) -> WorkerFrame {
        guard let header = WorkerFrame.parseHeader(try read(count: 5, timeout: timeout, deadline: deadline)),
              header.length <= maxLength else { throw .malformed }
        let payload = try read(count: header.length, timeout: timeout, deadline: deadline)
        switch header.kind {
        case 1: return .message(Data(payload))
        case 2: return .data(payload)
        default: return .binary(payload)
        }
    }

    /// Ends sending, then reads and drops what the peer still sends until it closes, for at
    /// most `seconds` and `limit` bytes, so what was sent is not lost to a connection reset.
    package func drain(for seconds: Double, upTo limit: Int) {
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

    private func read(count: Int, timeout: Double?, deadline: DispatchTime? = nil) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        try buffer.withUnsafeMutableBytes { raw in Result { () throws(Failure) in try fill(raw, timeout: timeout, deadline: deadline) } }.get()
        return buffer
    }

    private func fill(_ buffer: UnsafeMutableRawBufferPointer, timeout: Double?, deadline: DispatchTime? = nil) throws(Failure) {
        let count = buffer.count
        var filled = 0
        // With a deadline, take what is already there first and poll only when nothing is:
        // one system call per piece instead of two while a page streams in.
        var mustWait = false
        while filled < count {
            var wait = timeout
            if let deadline {
                let left = Double(Int64(bitPattern: deadline.uptimeNanoseconds &- DispatchTime.now().uptimeNanoseconds)) / 1e9
                if left <= 0 { throw .timedOut }
                wait = min(wait ?? left, left)
            }
            if let timeout = wait, mustWait {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = Syscall.retrying { poll(&poller, 1, Int32(max(1, timeout * 1000))) }
                if ready == 0 { throw .timedOut }
                if ready < 0 { throw .io(errno) }
            }
            let flags: Int32 = wait == nil ? 0 : Int32(MSG_DONTWAIT)
            let got = acceptsDescriptors ? receiveKeepingDescriptors(into: buffer.baseAddress! + filled, count: count - filled, flags: flags)
                : Syscall.retrying { recv(fd, buffer.baseAddress! + filled, count - filled, flags) }
            if got == 0 { throw .closed }
            if got < 0 {
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

    /// `recv` that keeps the descriptors the bytes came with.
    private func receiveKeepingDescriptors(into buffer: UnsafeMutableRawPointer, count: Int, flags: Int32) -> Int {
        let (got, descriptors) = SocketRights.receive(fd, UnsafeMutableRawBufferPointer(start: buffer, count: count), flags: flags,
                                                      control: control)
        received.append(contentsOf: descriptors)
        return got
    }
}

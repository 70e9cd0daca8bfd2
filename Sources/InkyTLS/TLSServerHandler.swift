import Logging
import NIOCore

/// HTTPS for one connection, first in its channel pipeline: ciphertext from the socket goes
/// into a `TLSSession`, its plaintext up the pipeline; plaintext written down is encrypted,
/// and the records written to the socket in the order written. Closing sends close_notify.
/// A failure (a handshake that goes wrong, garbage, plain HTTP on the HTTPS port) closes this
/// connection with a logged reason and touches nothing else.
public final class TLSServerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer
    public typealias OutboundIn = IOData
    public typealias OutboundOut = ByteBuffer

    private enum State {
        case handshaking
        case open
        /// close_notify sent (the output closed): what the client still sends is read.
        case outputClosed
        /// Failed or closed: nothing more is read or written.
        case closed
    }

    /// The largest TLS record's plaintext: one `SSL_read` gives at most this.
    private static let recordSize = 16 << 10

    private let session: TLSSession
    private let logger: Logger
    private var state = State.handshaking
    /// Writes made before the handshake completed, sent once it has.
    private var waiting: [(ByteBuffer, EventLoopPromise<Void>?)] = []

    /// Throws when libssl cannot make a connection (out of memory): the connection is then refused.
    public init(context: TLSServerContext, logger: Logger) throws {
        session = try TLSSession(context: context)
        self.logger = logger
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state == .handshaking || state == .open || state == .outputClosed else { return }
        let ciphertext = unwrapInboundIn(data)
        do {
            try ciphertext.withUnsafeReadableBytes { try session.receive($0) }
            if state == .handshaking {
                guard try session.handshake() else { return sendOutput(context) }
                state = .open
                logger.debug("TLS with \(Self.peer(context)): \(session.negotiated)")
                sendOutput(context)
                for (buffer, promise) in waiting { write(buffer, context: context, promise: promise) }
                waiting = []
                context.flush()
            }
            try readPlaintext(context)
            sendOutput(context)
        } catch let failure as TLSSession.Failure {
            fail(context, failure)
        } catch {
            fail(context, TLSSession.Failure(reason: "\(error)", isPlainHTTP: false))
        }
    }

    /// Every whole record received, decrypted and passed up, one `channelRead` each.
    private func readPlaintext(_ context: ChannelHandlerContext) throws(TLSSession.Failure) {
        while state == .open || state == .outputClosed {
            var plaintext = context.channel.allocator.buffer(capacity: Self.recordSize)
            var result = TLSSession.Read.needsMore
            var failure: TLSSession.Failure?
            plaintext.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.recordSize) { buffer in
                do throws(TLSSession.Failure) { result = try session.read(into: buffer) } catch { failure = error }
                if case .bytes(let count) = result { return count }
                return 0
            }
            if let failure { throw failure }
            switch result {
            case .bytes: context.fireChannelRead(wrapInboundOut(plaintext))
            case .needsMore: return
            case .closed:
                // The client ends the connection: answer close_notify and close, as it expects.
                closeAfterNotify(context)
                return
            }
        }
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(let plaintext) = unwrapOutboundIn(data) else {
            // A file region would go to the socket unencrypted: never sent.
            promise?.fail(ChannelError.operationUnsupported)
            return
        }
        write(plaintext, context: context, promise: promise)
    }

    private func write(_ plaintext: ByteBuffer, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        switch state {
        case .handshaking:
            waiting.append((plaintext, promise))
        case .outputClosed, .closed:
            promise?.fail(ChannelError.ioOnClosedChannel)
        case .open:
            do {
                try plaintext.withUnsafeReadableBytes { try session.write($0) }
            } catch {
                promise?.fail(error)
                return fail(context, error as? TLSSession.Failure ?? TLSSession.Failure(reason: "\(error)", isPlainHTTP: false))
            }
            context.write(wrapOutboundOut(takeOutput(context)), promise: promise)
        }
    }

    public func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode != .input, state == .open {
            session.shutdown()
            state = mode == .all ? .closed : .outputClosed
            sendOutput(context)
        }
        if mode == .all {
            state = .closed
            failWaiting()
        }
        context.close(mode: mode, promise: promise)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        if state == .handshaking { logger.debug("TLS with \(Self.peer(context)): closed by the client during the handshake") }
        state = .closed
        failWaiting()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        failWaiting()
    }

    /// The client sent close_notify: ours goes back, then the connection closes.
    private func closeAfterNotify(_ context: ChannelHandlerContext) {
        if state == .open { session.shutdown() }
        state = .closed
        sendOutput(context)
        failWaiting()
        context.close(promise: nil)
    }

    /// Logs why, sends what libssl has for the client (an alert), or for plain HTTP a plain
    /// answer saying to use https, and closes.
    private func fail(_ context: ChannelHandlerContext, _ failure: TLSSession.Failure) {
        let during = state == .handshaking ? "handshake" : "connection"
        state = .closed
        if failure.isPlainHTTP {
            logger.info("TLS with \(Self.peer(context)): a plain HTTP request came to the HTTPS port; answered 400 and closed")
            context.writeAndFlush(wrapOutboundOut(Self.plainHTTPAnswer(context.channel.allocator)), promise: nil)
        } else {
            logger.info("TLS \(during) with \(Self.peer(context)) failed, closed: \(failure.reason)")
            sendOutput(context)
        }
        failWaiting()
        context.close(promise: nil)
    }

    /// A browser pointed at http:// gets a page that says what to do, not a dropped connection.
    private static func plainHTTPAnswer(_ allocator: ByteBufferAllocator) -> ByteBuffer {
        let body = "This server speaks HTTPS only: use https:// in the address.\n"
        return allocator.buffer(string: "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
    }

    /// Whatever libssl has for the client, written and flushed.
    private func sendOutput(_ context: ChannelHandlerContext) {
        guard session.pendingOutput > 0 else { return }
        context.writeAndFlush(wrapOutboundOut(takeOutput(context)), promise: nil)
    }

    private func takeOutput(_ context: ChannelHandlerContext) -> ByteBuffer {
        let count = session.pendingOutput
        var ciphertext = context.channel.allocator.buffer(capacity: count)
        ciphertext.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { session.takeOutput(into: $0) }
        return ciphertext
    }

    private func failWaiting() {
        let writes = waiting
        waiting = []
        for (_, promise) in writes { promise?.fail(ChannelError.ioOnClosedChannel) }
    }

    private static func peer(_ context: ChannelHandlerContext) -> String {
        context.channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "a client"
    }
}

import HummingbirdCore
import Logging
import NIOCore

/// A Hummingbird child channel served over TLS: `TLSServerHandler` goes first in each
/// connection's pipeline, then the base channel (HTTP/1.1) sets up the rest over plaintext.
/// The same hook Hummingbird's own TLS channel uses, with libssl instead of BoringSSL.
public struct TLSServerChannel<Base: ServerChildChannel>: ServerChildChannel {
    public typealias Value = Base.Value

    let base: Base
    let context: TLSServerContext
    /// Where a failed handshake or a broken connection is told.
    let logger: Logger

    public init(_ base: Base, context: TLSServerContext, logger: Logger) {
        self.base = base
        self.context = context
        self.logger = logger
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(TLSServerHandler(context: context, logger: self.logger))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    public func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension TLSServerChannel: HTTPChannelHandler where Base: HTTPChannelHandler {
    public var responder: HTTPChannelHandler.Responder { base.responder }
}

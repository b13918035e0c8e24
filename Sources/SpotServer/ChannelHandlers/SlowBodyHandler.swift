import NIOCore
import NIOHTTPTypes

/// The least a request body must deliver to stay open: `bytes` in every `window`.
public struct MinimumTransferRate: Sendable, Equatable {
    /// Bytes a body must bring in each window; 0 checks nothing.
    public var bytes: Int
    public var window: Duration

    public init(bytes: Int = 1024, window: Duration = .seconds(30)) {
        self.bytes = bytes
        self.window = window
    }
}

/// Cuts request bodies that arrive slower than `rate` (a client holding a connection, a
/// temp file and a file descriptor open with a byte now and then): answers
/// `408 Request Timeout` and closes the connection, so the route reading the body fails
/// and removes what it had written.
///
/// A window starts when a request head arrives and another at the end of each window
/// until the request's end. A window counts against the client only if the server was
/// asking for bytes when it ended (a pipeline that stopped reading because its consumer
/// is busy does not cut the client). The time is the channel's event loop's: tests run it
/// on an `EmbeddedEventLoop` and move it with `advanceTime(by:)`. When the answer was
/// already sent, the connection is closed without another.
final class SlowBodyHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let rate: MinimumTransferRate
    /// Body bytes received in the current window.
    private var received = 0
    /// The end of the current window; `nil` between requests.
    private var windowEnd: Scheduled<Void>?
    /// Whether the server asked for bytes (`read`) and none came since.
    private var waitingForClient = false
    /// Whether the current request got its final (non-1xx) answer head.
    private var answered = false

    init(rate: MinimumTransferRate) {
        self.rate = rate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        waitingForClient = false
        switch unwrapInboundIn(data) {
        case .head:
            answered = false
            startWindow(context: context)
        case .body(let bytes):
            received += bytes.readableBytes
        case .end:
            stopWatching()
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        waitingForClient = true
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let response) = unwrapOutboundIn(data), response.status.kind != .informational { answered = true }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopWatching()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopWatching()
    }

    private func startWindow(context: ChannelHandlerContext) {
        windowEnd?.cancel()
        received = 0
        guard rate.bytes > 0 else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        windowEnd = context.eventLoop.scheduleTask(in: TimeAmount(rate.window)) {
            let (handler, context) = loopBound.value
            handler.windowEnded(context: context)
        }
    }

    private func windowEnded(context: ChannelHandlerContext) {
        guard received < rate.bytes, waitingForClient else { return startWindow(context: context) }
        stopWatching()
        if !answered {
            let message = "the request body arrived slower than \(rate.bytes) bytes in \(rate.window); the connection is closed: send it again on a faster link"
            for part in HTTPResponsePart.errorAnswer(.requestTimeout, message: message, closing: true) {
                context.write(wrapOutboundOut(part), promise: nil)
            }
        }
        context.flush()
        context.close(promise: nil)
    }

    private func stopWatching() {
        windowEnd?.cancel()
        windowEnd = nil
    }
}

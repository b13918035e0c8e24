import Access
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import SpotCore
import SpotService
import Synchronization

/// The thumbnail answers the router gave to `GET`s with a token, kept so that the same
/// request (same Authorization, same target) is answered again without the router while
/// nothing it depends on may have changed: the catalog change feed's stamp (any commit, by
/// any process: a revoked token, a deleted or damaged object, a changed claim; within the
/// feed's staleness bound) and the rules' revision (a reload) are read before every kept
/// answer, and any change drops them all; an answer to an ID token is not given after the
/// token expires. Rules that read `request.time` have no revision, and then nothing is
/// kept; nor is anything without rules to ask.
final class KeptThumbnails: Sendable {
    /// A request, as far as its thumbnail answer depends on it.
    struct Key: Hashable, Sendable {
        /// The whole Authorization header.
        var authorization: String
        /// The request target: path and query.
        var target: String
    }

    /// A 200 answer, without the headers each answer gets anew (`X-Request-Id`, `Date`, `Server`).
    struct Answer: Sendable {
        var headers: HTTPFields
        var body: ByteBuffer
        /// The route that made it, for the log and metrics.
        var route: String
        /// When the request's ID token expires (`nil` for SpotStore's own tokens): the
        /// answer is not given again after that.
        var validUntil: Date?
    }

    /// What kept answers were worked out under.
    struct Stamp: Equatable, Sendable {
        var catalog: Int64
        var rules: Int
    }

    private struct State {
        var stamp: Stamp?
        var answers: [Key: Answer] = [:]
        var bytes = 0
    }

    /// Body bytes kept at most; all answers are dropped when a new one would pass it.
    let byteBudget: Int
    private let changes: any CatalogChangeFeed
    private let rules: (any RulesRevision)?
    private let state = Mutex(State())

    init(changes: any CatalogChangeFeed, rules: (any RulesRevision)?, byteBudget: Int = 64 << 20) {
        self.changes = changes
        self.rules = rules
        self.byteBudget = byteBudget
    }

    /// The current stamp: read it before working out an answer to keep. `nil` when the
    /// feed has no stamp, or the rules read the clock or are not known.
    func stamp() -> Stamp? {
        guard let rules = rules?.revision, let catalog = try? changes.stamp() else { return nil }
        return Stamp(catalog: catalog, rules: rules)
    }

    /// The answer kept for `key`, if it is still right.
    func answer(to key: Key) -> Answer? {
        guard let stamp = stamp() else { return nil }
        let answer = state.withLock { state in
            if state.stamp != stamp { state = State(stamp: stamp) }
            return state.answers[key]
        }
        guard let answer, answer.validUntil.map({ $0 > Date() }) ?? true else { return nil }
        return answer
    }

    /// Keeps `answer` for `key`; `stamp` is what `stamp()` gave before the answer was worked
    /// out. An answer kept under a stamp that is no longer current is never given: stamps
    /// never come back.
    func keep(_ answer: Answer, for key: Key, stampedBefore stamp: Stamp?) {
        guard let stamp, answer.body.readableBytes <= byteBudget else { return }
        state.withLock { state in
            if state.stamp != stamp || state.bytes + answer.body.readableBytes > byteBudget { state = State(stamp: stamp) }
            state.bytes += answer.body.readableBytes - (state.answers[key]?.body.readableBytes ?? 0)
            state.answers[key] = answer
        }
    }
}

/// Answers a `GET …?alt=thumbnail` from `KeptThumbnails` before it reaches the router,
/// with the log line and metrics the router would have made; every other request, and
/// every request while an earlier one on the connection is still with the router (so
/// answers keep their order), goes on. Requests with `If-None-Match` (the router answers
/// 304), `Origin` (CORS headers) or a `Connection` other than `keep-alive` (such as
/// `close`) go on too, as does everything from a client address that failed to sign in
/// too often.
final class KeptThumbnailHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let kept: KeptThumbnails
    private let limiter: FailedAuthenticationLimiter
    private let addressing: ClientAddressing
    private let metrics: Metrics
    private let logger: Logger
    /// Requests passed on whose answer has not ended yet.
    private var withRouter = 0
    /// A kept answer to the request being read, given when its end arrives.
    private struct PendingAnswer {
        var answer: KeptThumbnails.Answer
        var log: RequestLog
        var id: String
        var started: ContinuousClock.Instant
    }

    private var pending: PendingAnswer?
    /// The address the connection comes from (a client's, or a trusted proxy's).
    private var connection: String?

    private static let dates = TextEverySecond(format: "%a, %d %b %Y %H:%M:%S GMT", utc: true)

    init(kept: KeptThumbnails, limiter: FailedAuthenticationLimiter, addressing: ClientAddressing, metrics: Metrics, logger: Logger) {
        self.addressing = addressing
        self.kept = kept
        self.limiter = limiter
        self.metrics = metrics
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if withRouter == 0, let answer = keptAnswer(to: request, context: context) {
                let id = RequestLog.sanitizedID(request.headerFields[.requestID]) ?? RequestLog.newID()
                pending = PendingAnswer(
                    answer: answer, log: RequestLog(method: request.method, route: answer.route, bytesIn: request.headerFields[.contentLength]),
                    id: id, started: .now)
                return
            }
            withRouter += 1
        case .body:
            if pending != nil { return }
        case .end:
            if let pending {
                self.pending = nil
                give(pending.answer, id: pending.id, context: context)
                metrics.recordKeptAnswer()
                pending.log.record(
                    status: .ok, bytesOut: pending.answer.body.readableBytes, duration: .now - pending.started, requestID: pending.id,
                    logger: logger, metrics: metrics)
                return
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { withRouter -= 1 }
        context.write(data, promise: promise)
    }

    private func keptAnswer(to request: HTTPRequest, context: ChannelHandlerContext) -> KeptThumbnails.Answer? {
        // strstr: the generic searches of the standard library cost more than all the rest.
        guard request.method == .get, let target = request.path, target.withCString({ strstr($0, "alt=thumbnail") }) != nil,
              let authorization = request.headerFields[.authorization],
              !request.headerFields.contains(.ifNoneMatch), !request.headerFields.contains(.origin),
              request.headerFields[.connection].map({ $0.lowercased() == "keep-alive" }) ?? true
        else { return nil }
        if connection == nil { connection = SpotRequestContext.clientAddress(of: context.channel.remoteAddress) }
        // Behind a trusted proxy the client is per request (X-Forwarded-For), as for the router.
        guard let connection, (try? limiter.check(addressing.clientAddress(connection: connection, headers: request.headerFields))) != nil
        else { return nil }
        return kept.answer(to: .init(authorization: authorization, target: target))
    }

    private func give(_ answer: KeptThumbnails.Answer, id: String, context: ChannelHandlerContext) {
        var headers = answer.headers
        headers[.requestID] = id
        headers[.date] = Self.dates.current()
        headers[.server] = "spotstore"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(answer.body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// Hummingbird's HTTP/1 channel with a `KeptThumbnailHandler` right before the router,
/// behind the connection state handler (so idle timeouts and graceful shutdown see its answers).
struct KeptThumbnailChannel: ServerChildChannel {
    let http1: HTTP1Channel
    let makeHandler: @Sendable (Logger) -> KeptThumbnailHandler

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        http1.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(makeHandler(logger), position: .after(try pipeline.handler(type: HTTPConnectionStateHandler.self)))
            return value
        }
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

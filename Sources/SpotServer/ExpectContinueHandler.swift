import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers a request head carrying `Expect: 100-continue` with `100 Continue` at once, so
/// clients that ask first (curl does for bodies over 1 MiB) send the body without waiting
/// a second for an answer that would otherwise never come. The request itself is then
/// decided as usual, body and all.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data),
           request.headerFields[.expect]?.lowercased() == "100-continue" {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}

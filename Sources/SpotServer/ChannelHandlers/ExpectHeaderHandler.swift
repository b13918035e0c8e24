import HTTPTypes
import NIOCore
import NIOHTTPTypes
import SpotAPI

/// Answers a request's `Expect` header before the request reaches the router.
///
/// `Expect: 100-continue` gets `100 Continue` at once, so clients that ask first (curl
/// does for bodies over 1 MiB) send the body without waiting a second for an answer that
/// would otherwise never come; the request itself is then decided as usual, body and all.
/// Any other expectation gets `417 Expectation Failed` (RFC 9110 §10.1.1) and the request,
/// body included, is dropped; the connection stays usable for the next request.
final class ExpectHeaderHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    /// Whether the parts being read belong to a request that was answered 417.
    private var droppingRequest = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            guard let expectation = request.headerFields[.expect] else { break }
            if expectation.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            } else {
                droppingRequest = true
                Self.refuse(expectation, context: context)
                return
            }
        case .body:
            if droppingRequest { return }
        case .end:
            if droppingRequest {
                droppingRequest = false
                return
            }
        }
        context.fireChannelRead(data)
    }

    /// Writes the 417 answer to an `Expect: expectation` this server cannot meet.
    private static func refuse(_ expectation: String, context: ChannelHandlerContext) {
        for part in HTTPResponsePart.errorAnswer(
            .expectationFailed, message: "the expectation '\(expectation)' is not supported; only Expect: 100-continue is")
        {
            context.write(NIOAny(part), promise: nil)
        }
        context.flush()
    }
}

extension HTTPResponsePart {
    /// The parts of a JSON error answer (as `ErrorMiddleware` gives) for a channel handler
    /// that answers before the router: head, body, end; with `closing`, the head says
    /// `Connection: close`.
    static func errorAnswer(_ status: HTTPResponse.Status, message: String, closing: Bool = false) -> [HTTPResponsePart] {
        let body = ErrorBody.json(status: status, message: message)
        var headers = HTTPFields.json
        headers[.contentLength] = String(body.readableBytes)
        headers[.xContentTypeOptions] = "nosniff"  // written here, past NoSniffMiddleware
        if closing { headers[.connection] = "close" }
        return [.head(HTTPResponse(status: status, headerFields: headers)), .body(body), .end(nil)]
    }
}

import HTTPTypes
import NIOCore
import NIOHTTPTypes
import SpotService

/// The first step of an upload in the IETF draft's resumable form (draft-ietf-httpbis-
/// resumable-upload, interop versions 3, 5 and 6, as URLSession speaks it from iOS 17):
/// before the body is read, the client must learn where to resume if the connection drops.
///
/// A `PUT …/o/{name}` or `POST …/o?name=` upload carrying `Upload-Draft-Interop-Version` and
/// `Upload-Complete` (or v3's `Upload-Incomplete`) gets `104 Upload Resumption Supported`
/// with the `Location` of its upload session; the request goes on to the router carrying the
/// session's new id in `sessionHeader` (a client cannot choose it: any such header it sent is
/// removed). On a connection with a response still going out to an earlier (pipelined)
/// request, the 104 waits until that response has ended, so it never lands inside it.
final class ResumableUploadAnnouncer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Where the router finds the id of the session announced.
    static let sessionHeader = HTTPField.Name("X-SpotStore-Upload-Session")!
    static let interopVersion = HTTPField.Name("Upload-Draft-Interop-Version")!
    static let uploadComplete = HTTPField.Name("Upload-Complete")!
    static let uploadIncomplete = HTTPField.Name("Upload-Incomplete")!
    /// The interop versions understood.
    static let versions: Set<String> = ["3", "5", "6"]

    let addressing: ClientAddressing
    /// Requests read whose final response has not ended yet.
    private var unanswered = 0
    /// Announcements waiting for the responses before them, each after that many ends.
    private var waiting: [(afterEnds: Int, announcement: HTTPResponse)] = []

    init(addressing: ClientAddressing) {
        self.addressing = addressing
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var request) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        request.headerFields[Self.sessionHeader] = nil
        if Self.isResumableCreation(request) {
            let id = Tokens.generate(prefix: "")
            request.headerFields[Self.sessionHeader] = id
            let base = addressing.baseURL(
                connection: SpotRequestContext.clientAddress(of: context.channel.remoteAddress), authority: request.authority,
                headers: request.headerFields)
            var announcement = HTTPResponse(status: .init(code: 104, reasonPhrase: "Upload Resumption Supported"))
            announcement.headerFields[Self.interopVersion] = request.headerFields[Self.interopVersion]
            announcement.headerFields[.location] = "\(base)\(ObjectRoutes.resumptionPath(of: id))"
            if unanswered == 0 {
                context.writeAndFlush(wrapOutboundOut(.head(announcement)), promise: nil)
            } else {
                waiting.append((unanswered, announcement))
            }
        }
        unanswered += 1
        context.fireChannelRead(wrapInboundOut(.head(request)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        guard case .end = unwrapOutboundIn(data) else { return }
        unanswered -= 1
        for index in waiting.indices { waiting[index].afterEnds -= 1 }
        while let first = waiting.first, first.afterEnds == 0 {
            waiting.removeFirst()
            context.writeAndFlush(wrapOutboundOut(.head(first.announcement)), promise: nil)
        }
    }

    /// Whether `request` starts an upload the draft's way that the router will take as one:
    /// a `PUT` of an object or a plain `POST …/o?name=` (not one of Firebase's protocols),
    /// with the interop version and the completeness header of that version.
    static func isResumableCreation(_ request: HTTPRequest) -> Bool {
        guard let version = request.headerFields[interopVersion], versions.contains(version),
              request.headerFields[version == "3" ? uploadIncomplete : uploadComplete] != nil,
              let target = request.path
        else { return false }
        let pathAndQuery = target.split(separator: "?", maxSplits: 1)
        let parts = (pathAndQuery.first ?? "").split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 5, parts[1] == "v0", parts[2] == "b", parts[4] == "o" else { return false }
        switch request.method {
        case .put:
            return parts.count >= 6
        case .post:
            let query = pathAndQuery.count == 2 ? pathAndQuery[1] : ""
            return parts.count == 5 && !query.contains("upload_id=") && request.headerFields[ObjectRoutes.uploadProtocol] == nil
                && !(request.headerFields[.contentType] ?? "").lowercased().hasPrefix("multipart/")
        default:
            return false
        }
    }
}

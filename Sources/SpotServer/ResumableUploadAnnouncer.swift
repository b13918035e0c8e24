import HTTPTypes
import NIOCore
import NIOHTTPTypes
import SpotService

/// The first step of an upload in the IETF draft's resumable form (draft-ietf-httpbis-
/// resumable-upload, interop versions 3, 5 and 6, as URLSession speaks it from iOS 17):
/// before the body is read, the client must learn where to resume if the connection drops.
///
/// A `PUT`/`POST` upload carrying `Upload-Draft-Interop-Version` and `Upload-Complete` (or
/// v3's `Upload-Incomplete`) gets `104 Upload Resumption Supported` with the `Location` of
/// its upload session at once; the request goes on to the router carrying the session's
/// new id in `sessionHeader` (a client cannot choose it: any such header it sent is removed).
final class ResumableUploadAnnouncer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    /// Where the router finds the id of the session announced.
    static let sessionHeader = HTTPField.Name("X-SpotStore-Upload-Session")!
    static let interopVersion = HTTPField.Name("Upload-Draft-Interop-Version")!
    static let uploadComplete = HTTPField.Name("Upload-Complete")!
    static let uploadIncomplete = HTTPField.Name("Upload-Incomplete")!
    /// The interop versions understood.
    static let versions: Set<String> = ["3", "5", "6"]

    let addressing: ClientAddressing

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
            context.writeAndFlush(wrapOutboundOut(.head(announcement)), promise: nil)
        }
        context.fireChannelRead(wrapInboundOut(.head(request)))
    }

    /// Whether `request` starts an upload the draft's way: an upload to an object's URL
    /// with the interop version and the completeness header of that version.
    static func isResumableCreation(_ request: HTTPRequest) -> Bool {
        guard let version = request.headerFields[interopVersion], versions.contains(version),
              request.method == .put || request.method == .post,
              let path = request.path?.split(separator: "?", maxSplits: 1).first
        else { return false }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 6 || (parts.count == 5 && request.method == .post),
              parts[1] == "v0", parts[2] == "b", parts[4] == "o" else { return false }
        return request.headerFields[version == "3" ? uploadIncomplete : uploadComplete] != nil
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes
import SpotAPI
import SpotCore
import SpotService

/// Resumable uploads for HTTP, the IETF draft's way (interop versions 3, 5, 6): a plain
/// `PUT`/`POST` upload that `ResumableUploadAnnouncer` answered with `104` and a
/// `Location`; after a dropped connection the client asks that URL for the offset
/// (`HEAD`) and sends the rest (`PATCH`), or cancels (`DELETE`). The upload is an upload
/// session of the catalog, so any instance goes on with it.
extension ObjectRoutes {
    /// Where an announced upload session is resumed.
    static func resumptionPath(of id: String) -> String { "/v0/uploads/\(id)" }

    /// The upload of `request` to `path` as session `id` (announced with `104`): stored at
    /// once when the request says it is complete, else kept for `PATCH`es (201).
    func resumableCreation(_ request: Request, _ context: SpotRequestContext, to path: ObjectPath, id: String) async throws -> Response {
        let version = request.headers[ResumableUploadAnnouncer.interopVersion] ?? "6"
        let complete = Self.isComplete(request.headers, version: version)
        let user = try await authenticate(request, context)
        let length = request.headers[.contentLength].flatMap { Int64($0) }
        let total = request.headers[.uploadLength].flatMap { Int64($0) } ?? (complete ? length : nil)
        let location = "\(baseURL(request, context))\(Self.resumptionPath(of: id))"
        _ = try await service.startUploadSession(path, by: user, contentType: request.headers[.contentType], declaredSize: total, id: id)
        var response = try await resumableAppend(request, context, id, at: 0, by: user, complete: complete, version: version)
        response.headers[.location] = location
        if response.status == .noContent { response.status = .created }
        return response
    }

    /// `HEAD /v0/uploads/{id}`: the offset the upload reached.
    @Sendable func resumptionOffset(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let version = request.headers[ResumableUploadAnnouncer.interopVersion] ?? "6"
        let user = try await authenticate(request, context)
        var response = switch try await service.resumptionPoint(of: try decodedParameter("id", as: "upload id", context), by: user) {
        case .active(let session): Self.resumableStatus(.noContent, offset: session.received, complete: false, version: version)
        case .finished(let finished): Self.resumableStatus(.noContent, offset: finished.size, complete: true, version: version)
        }
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `PATCH /v0/uploads/{id}` with `Upload-Offset` and the next bytes; with the upload
    /// complete, the object is stored and its metadata answered.
    @Sendable func resumptionAppend(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let version = request.headers[ResumableUploadAnnouncer.interopVersion] ?? "6"
        guard let offsetText = request.headers[.uploadOffset], let offset = Int64(offsetText) else {
            throw SpotError(.badRequest, "a resumption PATCH needs Upload-Offset: where its bytes start")
        }
        let user = try await authenticate(request, context)
        let id = try decodedParameter("id", as: "upload id", context)
        return try await resumableAppend(
            request, context, id, at: offset, by: user, complete: Self.isComplete(request.headers, version: version), version: version)
    }

    /// `DELETE /v0/uploads/{id}`: cancels the upload (204).
    @Sendable func resumptionCancel(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        try await service.cancelUploadSession(try decodedParameter("id", as: "upload id", context), by: user)
        return Response(status: .noContent)
    }

    /// Appends the body at `offset`, then stores the object when `complete`: 204 with the
    /// offset while incomplete, 200 with the metadata when stored, 409 with the right offset.
    private func resumableAppend(
        _ request: Request, _ context: SpotRequestContext, _ id: String, at offset: Int64, by user: User?, complete: Bool, version: String
    ) async throws -> Response {
        do {
            let session = try await appendBody(of: request, context, to: id, at: offset, by: user)
            guard complete else { return Self.resumableStatus(.noContent, offset: session.received, complete: false, version: version) }
            let object = try await finishSession(id, at: session.received, by: user)
            var response = try await metadata(object, request, context)
            Self.describe(&response.headers, offset: object.size, complete: true, version: version)
            return response
        } catch let mismatch as UploadOffsetMismatch {
            return Self.resumableStatus(.conflict, offset: mismatch.expected, complete: false, version: version)
        }
    }

    /// Whether the request says the upload ends with it: `Upload-Complete: ?1` (v5, v6),
    /// `Upload-Incomplete: ?0` (v3).
    private static func isComplete(_ headers: HTTPFields, version: String) -> Bool {
        version == "3" ? headers[ResumableUploadAnnouncer.uploadIncomplete] != "?1" : headers[ResumableUploadAnnouncer.uploadComplete] != "?0"
    }

    private static func resumableStatus(_ status: HTTPResponse.Status, offset: Int64, complete: Bool, version: String) -> Response {
        var headers = HTTPFields()
        describe(&headers, offset: offset, complete: complete, version: version)
        return Response(status: status, headers: headers)
    }

    /// The draft's headers of an answer: the version, `Upload-Offset` and completeness.
    private static func describe(_ headers: inout HTTPFields, offset: Int64, complete: Bool, version: String) {
        headers[ResumableUploadAnnouncer.interopVersion] = version
        headers[.uploadOffset] = String(offset)
        if version == "3" {
            headers[ResumableUploadAnnouncer.uploadIncomplete] = complete ? "?0" : "?1"
        } else {
            headers[ResumableUploadAnnouncer.uploadComplete] = complete ? "?1" : "?0"
        }
    }
}

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

import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
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

extension HTTPField.Name {
    /// The offset of an upload (tus, the IETF draft).
    static let uploadOffset = Self("Upload-Offset")!
    /// The total size of an upload (tus, the IETF draft).
    static let uploadLength = Self("Upload-Length")!
}

import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SpotAPI
import SpotCore
import SpotService

/// Puts `Tus-Resumable` on every answer of the tus routes, errors included (tus 1.0.0
/// requires it), turning errors into answers here with `errors`.
struct TusResumableHeader<Context: RequestContext>: RouterMiddleware {
    let errors: ErrorMiddleware<Context>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await errors.handle(request, context: context, next: next)
        response.headers[TusRoutes.tusResumable] = TusRoutes.version
        return response
    }
}

/// tus 1.0.0 (core, creation, creation-with-upload, termination, expiration, checksum with
/// sha1, sha256 and md5) at `/v0/b/{bucket}/uploads`, for tus clients (TUSKit, tus-js-client, Uppy,
/// tuspy). `Upload-Metadata` names the object with `objectName` (or `filename`) and its
/// type with `contentType` (or `filetype`), as Supabase's tus endpoint does. The upload
/// is an upload session of the catalog: any instance goes on with it, and it is stored as
/// an object the moment its last byte arrives.
struct TusRoutes: UploadRoutes {
    let service: StorageService
    let limiter: FailedAuthenticationLimiter
    let addressing: ClientAddressing
    let metrics: Metrics
    let gate: UploadGate

    static let version = "1.0.0"
    static let tusResumable = HTTPField.Name("Tus-Resumable")!
    static let tusVersion = HTTPField.Name("Tus-Version")!
    static let tusExtension = HTTPField.Name("Tus-Extension")!
    static let tusChecksumAlgorithm = HTTPField.Name("Tus-Checksum-Algorithm")!
    static let uploadMetadata = HTTPField.Name("Upload-Metadata")!
    static let uploadExpires = HTTPField.Name("Upload-Expires")!
    static let uploadChecksum = HTTPField.Name("Upload-Checksum")!
    static let uploadDeferLength = HTTPField.Name("Upload-Defer-Length")!
    /// The content type of a body that continues an upload.
    static let chunkType = "application/offset+octet-stream"

    /// `OPTIONS …/uploads[/{id}]`: what this server speaks.
    @Sendable func options(_ request: Request, context: SpotRequestContext) async throws -> Response {
        var headers = Self.headers()
        headers[Self.tusVersion] = Self.version
        headers[Self.tusExtension] = "creation,creation-with-upload,termination,expiration,checksum"
        headers[Self.tusChecksumAlgorithm] = ChunkChecksum.algorithms.joined(separator: ",")
        return Response(status: .noContent, headers: headers)
    }

    /// `POST /v0/b/{bucket}/uploads` with `Upload-Length` and `Upload-Metadata`: creates the
    /// upload (201 with its `Location`), with its first bytes when the body has them.
    @Sendable func create(_ request: Request, context: SpotRequestContext) async throws -> Response {
        if let refusal = Self.versionRefusal(request) { return refusal }
        let user = try await authenticate(request, context)
        guard request.headers[Self.uploadDeferLength] == nil else {
            throw SpotError(.badRequest, "Upload-Defer-Length is not supported: give Upload-Length")
        }
        guard let lengthText = request.headers[.uploadLength], let length = Int64(lengthText), length >= 0 else {
            throw SpotError(.badRequest, "a tus upload needs Upload-Length: its size in bytes")
        }
        let metadata = try Self.metadata(request.headers[Self.uploadMetadata] ?? "")
        guard let name = metadata["objectName"] ?? metadata["filename"] else {
            throw SpotError(.badRequest, "Upload-Metadata must name the object: objectName (or filename) with the base64 of its path in the bucket")
        }
        let path = try ObjectPath(bucket: bucket(context), name: name)
        let session = try await service.startUploadSession(
            path, by: user, contentType: metadata["contentType"] ?? metadata["filetype"], declaredSize: length,
            clientMetadata: request.headers[Self.uploadMetadata])
        var headers = Self.headers(for: session)
        headers[.location] = "\(baseURL(request, context))/v0/b/\(path.bucket)/uploads/\(session.id)"
        let hasBody = request.headers[.contentType] == Self.chunkType
        if hasBody || length == 0 {
            let (answer, status) = try await receive(request, context, session.id, at: 0, by: user)
            headers[.uploadOffset] = answer[.uploadOffset]
            if let status { return Response(status: status, headers: headers) }
        }
        return Response(status: .created, headers: headers)
    }

    /// `HEAD …/uploads/{id}`: where the upload is (`Upload-Offset`).
    @Sendable func head(_ request: Request, context: SpotRequestContext) async throws -> Response {
        if let refusal = Self.versionRefusal(request) { return refusal }
        let user = try await authenticate(request, context)
        let id = try await id(context, by: user)
        var headers: HTTPFields
        switch try await service.resumptionPoint(of: id, by: user) {
        case .active(let session):
            headers = Self.headers(for: session, offset: session.received)
            headers[Self.uploadMetadata] = try service.clientMetadata(of: session)
            // Every byte arrived but the object was not stored (a failure after the last
            // PATCH): the client will send nothing more, so it is stored now.
            if session.declaredSize == session.received {
                _ = try await finishSession(id, by: user)
            }
        case .finished(let finished):
            headers = Self.headers(offset: finished.size)
            headers[.uploadLength] = String(finished.size)
        }
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers)
    }

    /// `PATCH …/uploads/{id}` with `Upload-Offset` and the next bytes: 204 with the new
    /// offset; the last bytes store the object.
    @Sendable func patch(_ request: Request, context: SpotRequestContext) async throws -> Response {
        if let refusal = Self.versionRefusal(request) { return refusal }
        guard request.headers[.contentType] == Self.chunkType else {
            throw SpotError(.unsupportedMediaType, "a tus PATCH carries Content-Type: \(Self.chunkType)")
        }
        guard let offsetText = request.headers[.uploadOffset], let offset = Int64(offsetText), offset >= 0 else {
            throw SpotError(.badRequest, "a tus PATCH needs Upload-Offset: where its bytes start")
        }
        let user = try await authenticate(request, context)
        let id = try await id(context, by: user)
        let (headers, status) = try await receive(request, context, id, at: offset, by: user)
        return Response(status: status ?? .noContent, headers: headers)
    }

    /// `DELETE …/uploads/{id}` (termination): 204; the bytes are gone and the spot's place freed.
    @Sendable func delete(_ request: Request, context: SpotRequestContext) async throws -> Response {
        if let refusal = Self.versionRefusal(request) { return refusal }
        let user = try await authenticate(request, context)
        try await service.cancelUploadSession(try await id(context, by: user), by: user)
        return Response(status: .noContent, headers: Self.headers())
    }

    /// Appends the body at `offset` and stores the object once every byte is there; returns
    /// the answer's headers (the offset reached, the expiry) and its status when it is not
    /// 204 (409 on an offset mismatch, 460 on a checksum mismatch).
    private func receive(
        _ request: Request, _ context: SpotRequestContext, _ id: String, at offset: Int64, by user: User?
    ) async throws -> (headers: HTTPFields, status: HTTPResponse.Status?) {
        try Self.refuseTransferCodings(request)
        let checksum = try request.headers[Self.uploadChecksum].map(Self.checksum)
        do {
            let session = try await appendBody(of: request, context, to: id, at: offset, by: user, checksum: checksum)
            if session.declaredSize == session.received { _ = try await finishSession(id, by: user) }
            return (Self.headers(for: session, offset: session.received), nil)
        } catch let mismatch as UploadOffsetMismatch {
            return (Self.headers(for: mismatch.session, offset: mismatch.expected), .conflict)
        } catch is ChunkChecksumMismatch {
            return (Self.headers(offset: offset), HTTPResponse.Status(code: 460, reasonPhrase: "Checksum Mismatch"))
        }
    }

    /// `Tus-Resumable` on every answer; `Upload-Length` and `Upload-Expires` when there is a
    /// session, `Upload-Offset` when given.
    private static func headers(for session: UploadSession? = nil, offset: Int64? = nil) -> HTTPFields {
        var headers = HTTPFields()
        headers[tusResumable] = version
        headers[.uploadOffset] = offset.map(String.init)
        if let session {
            headers[.uploadLength] = session.declaredSize.map(String.init)
            headers[uploadExpires] = httpDate(session.expiresAt)
        }
        return headers
    }

    /// `Wed, 25 Jun 2014 16:00:00 GMT`: a date as HTTP headers give them.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// The answer to a request without `Tus-Resumable: 1.0.0` (412 with `Tus-Version`, as
    /// the protocol says), or `nil`.
    private static func versionRefusal(_ request: Request) -> Response? {
        guard request.headers[tusResumable] != version else { return nil }
        let status = HTTPResponse.Status.preconditionFailed
        var headers = HTTPFields.json(status)
        headers[tusVersion] = version
        let message = "this tus server speaks Tus-Resumable: \(version); the request said \(request.headers[tusResumable] ?? "nothing")"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ErrorBody.json(status: status, message: message)))
    }

    /// `Upload-Metadata`: comma-separated `key base64value` pairs (the value may be absent).
    static func metadata(_ header: String) throws(SpotError) -> [String: String] {
        var pairs: [String: String] = [:]
        for pair in header.split(separator: ",") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard let key = parts.first else { continue }
            if parts.count == 2 {
                guard let data = Data(base64Encoded: String(parts[1])), let value = String(data: data, encoding: .utf8) else {
                    throw SpotError(.badRequest, "the Upload-Metadata value of '\(key)' is not base64 of UTF-8 text")
                }
                pairs[String(key)] = value
            } else {
                pairs[String(key)] = ""
            }
        }
        return pairs
    }

    /// `Upload-Checksum: <algorithm> <base64 digest>`.
    private static func checksum(_ header: String) throws(SpotError) -> ChunkChecksum {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let digest = Data(base64Encoded: String(parts[1])),
              let checksum = ChunkChecksum(algorithm: parts[0].lowercased(), digest: Array(digest))
        else {
            throw SpotError(.badRequest, "Upload-Checksum must be '<algorithm> <base64 digest>' with one of \(ChunkChecksum.algorithms.joined(separator: ", "))")
        }
        return checksum
    }

    /// The upload id of the URL, which must name an upload into the URL's bucket.
    private func id(_ context: SpotRequestContext, by user: User?) async throws -> String {
        try await uploadSession(try decodedParameter("id", as: "upload id", context), context, by: user)
    }
}

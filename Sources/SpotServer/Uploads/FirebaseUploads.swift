import HTTPTypes
import Hummingbird
import SpotAPI
import SpotCore
import SpotService

/// Firebase Storage's upload protocols on `POST /v0/b/{bucket}/o`, as its SDKs speak them:
/// multipart (`X-Goog-Upload-Protocol: multipart`: a JSON metadata part, then the bytes) and
/// resumable (`FirebaseResumableUploads.swift`).
extension ObjectRoutes {
    static let uploadProtocol = HTTPField.Name("X-Goog-Upload-Protocol")!

    /// The answer to a Firebase upload request, or `nil` when the request is a plain upload.
    func firebaseUpload(_ request: Request, _ context: SpotRequestContext) async throws -> Response? {
        let parameters = request.uri.queryParameters
        if let id = parameters.get("upload_id") { return try await continueSession(id, request, context) }
        let named = request.headers[Self.uploadProtocol]?.lowercased()
        let contentType = request.headers[.contentType] ?? ""
        if named == "multipart" || (named == nil && contentType.lowercased().hasPrefix("multipart/related")) {
            return try await multipartUpload(request, context)
        }
        guard named == "resumable" else { return nil }
        guard request.headers[Self.uploadCommand]?.lowercased() == "start" else {
            throw SpotError(.badRequest, "a resumable upload starts with X-Goog-Upload-Command: start")
        }
        return try await startSession(request, context)
    }

    /// A multipart upload: the metadata part names the settings, the second part is stored.
    private func multipartUpload(_ request: Request, _ context: SpotRequestContext) async throws -> Response {
        let path = try namedPath(request, context)
        return try await receiving(request, context) { user in
            var body = try MultipartRelated(body: request.body, contentType: request.headers[.contentType] ?? "")
            let (json, mediaType) = try await body.readMetadata()
            let asked = try MetadataBody(json: json)
            let details = try Self.details(of: asked, at: path)
            return try await service.upload(
                path, by: user, contentType: asked.change.contentType ?? mediaType, declaredSize: nil, details: details,
                body: body.media())
        }
    }

    /// The settings and expected MD5 of an upload from its metadata, which may not name
    /// another object.
    static func details(of asked: MetadataBody, at path: ObjectPath) throws(SpotError) -> UploadDetails {
        if let name = asked.name, name != path.name {
            throw SpotError(.badRequest, "the metadata names '\(name)' but the upload is to '\(path.name)'")
        }
        return UploadDetails(settings: try ObjectSettings().applying(asked.change), md5: asked.md5)
    }
}

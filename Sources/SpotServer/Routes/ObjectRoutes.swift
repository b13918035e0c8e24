import Access
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import SpotAPI
import SpotCore
import SpotService

/// The handlers of `/v0/b/{bucket}/o…`.
package struct ObjectRoutes: UploadRoutes {
    let service: StorageService
    let limiter: FailedAuthenticationLimiter
    let addressing: ClientAddressing
    let metrics: Metrics
    let gate: UploadGate
    /// Where thumbnail answers are kept for `KeptThumbnailHandler`; `nil` keeps none.
    let kept: KeptThumbnails?

    /// `POST /v0/b/{bucket}/o?name={name}`: upload the raw body, or speak Firebase's upload
    /// protocols (`X-Goog-Upload-Protocol: multipart` or `resumable`; see `FirebaseUploads`).
    @Sendable func create(_ request: Request, context: SpotRequestContext) async throws -> Response {
        if let method = request.headers[Self.methodOverride] {
            throw SpotError(.badRequest, "X-HTTP-Method-Override: \(method) is not taken by POST …/o?name=, which uploads; send the method itself (DELETE …/o?name= deletes)")
        }
        if let firebase = try await firebaseUpload(request, context) { return firebase }
        return try await upload(request, context, to: try namedPath(request, context))
    }

    /// The path of `?name=` in the bucket of the URL.
    func namedPath(_ request: Request, _ context: SpotRequestContext) throws -> ObjectPath {
        guard let name = request.uri.queryParameters.get("name") else {
            throw SpotError(.badRequest, "give the object's name: POST /v0/b/{bucket}/o?name={path}")
        }
        return try ObjectPath(bucket: bucket(context), name: name)
    }

    /// `PUT /v0/b/{bucket}/o/{name}`: upload the raw body.
    @Sendable func put(_ request: Request, context: SpotRequestContext) async throws -> Response {
        try await upload(request, context, to: try objectPath(request, context))
    }

    /// `POST /v0/b/{bucket}/o/{name}?alt=downloadTokens`: a new download token (owner only);
    /// with `X-HTTP-Method-Override: PATCH`, a metadata update.
    @Sendable func post(_ request: Request, context: SpotRequestContext) async throws -> Response {
        if let method = request.headers[Self.methodOverride] {
            guard method.uppercased() == "PATCH" else {
                throw SpotError(.badRequest, "X-HTTP-Method-Override: \(method) is not supported; only PATCH is (a metadata update); send other methods as themselves")
            }
            return try await patch(request, context: context)
        }
        let path = try objectPath(request, context)
        guard request.uri.queryParameters.get("alt") == "downloadTokens" else {
            throw SpotError(.badRequest, "POST to an object makes a download token: POST …/o/{name}?alt=downloadTokens; upload with PUT")
        }
        let user = try await authenticate(request, context)
        let (token, info) = try await service.addDownloadToken(to: path, by: user)
        let url = "\(ObjectResource.url(of: path, baseURL: baseURL(request, context)))?alt=media&token=\(token)"
        return try json(NewDownloadTokenResource(id: info.id, token: token, url: url, timeCreated: info.createdAt))
    }

    /// `GET` (or `HEAD`) `/v0/b/{bucket}/o/{name}`: metadata; `?alt=media` the bytes;
    /// `?alt=thumbnail&size=N[&format=webp]` a thumbnail; `?alt=signedUrl&expiresIn=S` a signed download URL
    /// and `?alt=downloadTokens` the download tokens (owner only). `?alt=media` with
    /// `expires`, `signedBy`, `signedAt` and `signature`, or with a download `token`, needs
    /// no Authorization.
    @Sendable func get(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let path = try objectPath(request, context)
        let parameters = request.uri.queryParameters
        if let signature = parameters.get("signature") {
            guard parameters.get("alt") == "media", let expires = parameters.get("expires", as: Int64.self),
                  let signedBy = parameters.get("signedBy"), let signedAt = parameters.get("signedAt", as: Int64.self)
            else {
                throw SpotError(.badRequest, "a signed URL needs alt=media, expires, signedBy, signedAt and signature, as it was given (links made before SpotStore named their maker have none: ask for a new one)")
            }
            let grant = DownloadGrant(expires: expires, signedBy: signedBy, signedAt: signedAt)
            return try await media(try await service.download(at: path, signature: signature, grant: grant), at: path, request: request)
        }
        if let token = parameters.get("token") {
            guard parameters.get("alt") == "media" else {
                throw SpotError(.badRequest, "a download token works with alt=media: …/o/{name}?alt=media&token=…")
            }
            return try await media(try await withFailuresCounted(request, context) {
                try await download(at: path, token: token)
            }, at: path, request: request)
        }
        // Read before anything the answer depends on, so a kept thumbnail is never older.
        let stamp = parameters.get("alt") == "thumbnail" ? kept?.stamp() : nil
        let user = try await authenticate(request, context)
        switch parameters.get("alt") {
        case nil, "json":
            return try await metadata(try await service.object(at: path, for: user), request, context)
        case "signedUrl":
            let lifetime = try parameters.get("expiresIn").map { text throws(SpotError) in
                guard let seconds = Double(text) else { throw SpotError(.badRequest, "expiresIn must be a number of seconds") }
                return seconds
            } ?? 3600
            let (grant, signature) = try await service.signDownload(of: path, lifetime: lifetime, by: user)
            let url = "\(ObjectResource.url(of: path, baseURL: baseURL(request, context)))?alt=media&expires=\(grant.expires)"
                + "&signedBy=\(ObjectPath.urlSegment(grant.signedBy))&signedAt=\(grant.signedAt)&signature=\(signature)"
            return try json(SignedURLResource(url: url, expires: Date(timeIntervalSince1970: Double(grant.expires))))
        case "downloadTokens":
            let tokens = try await service.downloadTokens(of: path, by: user)
            return try json(DownloadTokensResource(tokens: tokens.map { .init(id: $0.id, timeCreated: $0.createdAt) }))
        case "media":
            return try await media(try await service.download(at: path, for: user), at: path, request: request)
        case "thumbnail":
            guard let size = request.uri.queryParameters.get("size", as: Int.self) else {
                throw SpotError(.badRequest, "give the thumbnail size: ?alt=thumbnail&size=256 (or 1024)")
            }
            let format = parameters.get("format")
            guard format == nil || format == "webp" else {
                throw SpotError(.badRequest, "unknown thumbnail format=\(format ?? ""); use format=webp, or no format for JPEG (PNG for images with alpha)")
            }
            let thumbnail = try await service.thumbnail(of: path, size: size, webP: format == "webp", for: user)
            let (headers, answer) = try await thumbnailAnswer(thumbnail, of: path, request: request, cacheControl: "private, max-age=31536000, immutable")
            guard let body = answer.body else { return Response(status: answer.status, headers: headers) }
            if let kept, let authorization = request.headers[.authorization], let target = request.head.path {
                kept.keep(
                    .init(headers: headers, body: body, route: context.endpointPath ?? "unmatched", validUntil: user?.idToken?.expiresAt),
                    for: .init(authorization: authorization, target: target), stampedBefore: stamp)
            }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
        case let other?:
            throw SpotError(.badRequest, "unknown alt=\(other); use alt=media, alt=thumbnail, alt=signedUrl, alt=downloadTokens or no alt for metadata")
        }
    }

    /// `PATCH /v0/b/{bucket}/o/{name}` with Firebase's metadata JSON: fields named are set,
    /// `null` ones removed; answers the object's metadata.
    @Sendable func patch(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let path = try objectPath(request, context)
        let user = try await authenticate(request, context)
        let asked = try await metadataBody(of: request)
        let object = try await service.updateMetadata(of: path, asked.change, by: user)
        return try await metadata(object, request, context)
    }

    /// The Firebase metadata JSON of `request`'s body (a metadata update, a resumable start).
    /// - Throws: `.tooLarge` over `MetadataBody.maxBytes`; what `MetadataBody` refuses.
    func metadataBody(of request: Request) async throws -> MetadataBody {
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: MetadataBody.maxBytes)
        } catch is NIOTooManyBytesError {
            throw SpotError(.tooLarge, "object metadata is at most \(MetadataBody.maxBytes / 1024) KiB of JSON")
        }
        return try MetadataBody(json: Array(body.readableBytesView))
    }

    /// `X-HTTP-Method-Override`, with which clients that cannot send `PATCH` send a `POST`.
    static let methodOverride = HTTPField.Name("X-HTTP-Method-Override")!

    /// The metadata of `object` as a reader sees it, with the download token made on upload.
    func metadata(_ object: StoredObject, _ request: Request, _ context: SpotRequestContext) async throws -> Response {
        try json(ObjectResource(object, baseURL: baseURL(request, context), downloadToken: try await service.visibleDownloadToken(of: object)))
    }

    /// The metadata of an object just uploaded, with the token its upload made.
    func metadata(_ uploaded: UploadedObject, _ request: Request, _ context: SpotRequestContext) throws -> Response {
        try json(ObjectResource(uploaded.object, baseURL: baseURL(request, context), downloadToken: uploaded.downloadToken))
    }

    /// `DELETE /v0/b/{bucket}/o/{name}`: 204 on success. With `?alt=downloadTokens&id=ID`,
    /// revokes that download token instead; any other parameter is refused, so a mistyped
    /// revocation never deletes the object.
    @Sendable func delete(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let path = try objectPath(request, context)
        let parameters = request.uri.queryParameters
        let user = try await authenticate(request, context)
        if parameters.get("alt") == "downloadTokens", let id = parameters.get("id"), parameters.count == 2 {
            try await service.revokeDownloadToken(id, of: path, by: user)
        } else if parameters.isEmpty {
            _ = try await service.delete(path, by: user)
        } else {
            throw SpotError(.badRequest, "DELETE …/o/{name} deletes the object and takes no parameters; revoke a download token with ?alt=downloadTokens&id=ID")
        }
        return Response(status: .noContent)
    }

    /// `POST /v0/b/{bucket}/digests` with `{"digests": [hex…], "probe": "spot/name"}`: which
    /// digests the user already stores in the bucket, and the limits of a new object at
    /// `probe` (for bulk imports: one request per batch of up to 1000 digests).
    @Sendable func checkDigests(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        let asked = try await decodeBody(
            DigestCheckBody.self, of: request, upTo: 256 * 1024, example: #"{"digests": ["<64 hex>", …], "probe": "spot/name.jpg"}"#)
        let digests = try asked.digests.map { hex throws(SpotError) in
            guard let digest = Digest(hex: hex) else { throw SpotError(.badRequest, "'\(hex)' is not a SHA-256 digest (64 hex digits)") }
            return digest
        }
        let (present, limits) = try await service.ingestCheck(bucket: try bucket(context), digests: digests, probe: asked.probe, for: user)
        return try json(DigestCheckResource(
            present: Dictionary(uniqueKeysWithValues: present.map { ($0.key.hex, $0.value) }),
            limits: limits.map(LimitsResource.init)))
    }

    /// `GET /v0/b/{bucket}/o?prefix=&delimiter=/&pageToken=&maxResults=`.
    @Sendable func list(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        let parameters = request.uri.queryParameters
        var query = ListQuery(bucket: try bucket(context), prefix: parameters.get("prefix") ?? "")
        query.delimiter = parameters.get("delimiter")
        query.pageToken = parameters.get("pageToken")
        if let text = parameters.get("maxResults") {
            guard let value = Int(text) else { throw SpotError(.badRequest, "maxResults must be a number from 1 to \(ListQuery.maxPageSize)") }
            query.maxResults = value
        }
        let listing = try await service.list(query, for: user)
        let base = baseURL(request, context)
        return try json(ListResource(
            prefixes: listing.prefixes, items: listing.items.map { ObjectResource($0, baseURL: base) },
            nextPageToken: listing.nextPageToken))
    }

    /// `DELETE /v0/b/{bucket}/o?name={name}`: deletes the object, as Firebase REST clients
    /// (pyrebase) send it; 204.
    @Sendable func deleteNamed(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        _ = try await service.delete(try namedPath(request, context), by: user)
        return Response(status: .noContent)
    }

    // MARK: Helpers

    /// The bytes `?token=` opens: a download token's, or, when it is not one, those the
    /// user it signs in may read (REST clients such as pyrebase put the user's own ID token
    /// there); the download token's refusal when it is neither.
    private func download(at path: ObjectPath, token: String) async throws -> Download {
        do {
            return try await service.download(at: path, downloadToken: token)
        } catch let refusal as SpotError where refusal.kind == .forbidden {
            guard let user = try? await service.authenticate(token: token) else { throw refusal }
            return try await service.download(at: path, for: user)
        }
    }

    /// Stores the body at `path` (see `receiving(_:_:)`), or starts the resumable upload
    /// `ResumableUploadAnnouncer` announced.
    private func upload(_ request: Request, _ context: SpotRequestContext, to path: ObjectPath) async throws -> Response {
        if let id = request.headers[ResumableUploadAnnouncer.sessionHeader] {
            return try await resumableCreation(request, context, to: path, id: id)
        }
        return try await receiving(request, context) { user in
            let declared = request.headers[.contentLength].flatMap { Int64($0) }
            return try await service.upload(
                path, by: user, contentType: request.headers[.contentType], declaredSize: declared,
                body: request.body.map { $0.readableBytesView })
        }
    }

    /// Runs `store` for a request whose body becomes an object, and answers its metadata:
    /// refused with 503 (`UploadGate.Draining`) during a shutdown, with 429 when its user (or
    /// address) has as many uploads in flight as the gate allows, and for a transfer coding
    /// other than chunked (a gzip body would be stored still encoded).
    func receiving(
        _ request: Request, _ context: SpotRequestContext, _ store: (User?) async throws -> UploadedObject
    ) async throws -> Response {
        let user = try await authenticate(request, context)
        return try await gate.admitting(uploader(user, request, context)) {
            try Self.refuseTransferCodings(request)
            let uploaded = try await store(user)
            metrics.recordUpload(bytes: uploaded.object.size)
            return try metadata(uploaded, request, context)
        }
    }

    /// The object name is everything after `/o/`, percent-decoded as a whole, so both
    /// `a%2Fb.jpg` (Firebase style) and `a/b.jpg` name the same object.
    private func objectPath(_ request: Request, _ context: SpotRequestContext) throws -> ObjectPath {
        let bucket = try bucket(context)
        let raw = request.uri.path
        let prefix = "/v0/b/\(bucket)/o/"
        guard raw.hasPrefix(prefix), let name = PercentDecoding.decode(raw.dropFirst(prefix.count)) else {
            throw SpotError(.badRequest, "the object name in the URL is not valid percent-encoded UTF-8")
        }
        return try ObjectPath(bucket: bucket, name: name)
    }
}

import HTTPTypes
import Hummingbird
import SpotCore
import SpotService

/// Handlers that receive upload bodies: they admit them through `gate` (503 while the server
/// drains, 429 past the uploads one client may send at once) and count stored objects in `metrics`.
protocol UploadRoutes: ServiceRoutes {
    var gate: UploadGate { get }
    var metrics: Metrics { get }
}

extension UploadRoutes {
    /// Only chunked framing is undone; refuses a body in another transfer coding (a gzip body
    /// would be stored still encoded).
    static func refuseTransferCodings(_ request: Request) throws(SpotError) {
        if let coding = request.headers[.transferEncoding], coding.lowercased() != "chunked" {
            throw SpotError(.badRequest, "the transfer coding '\(coding)' is not supported; send the body as is or chunked")
        }
    }

    /// Whom an upload counts against in the gate: its user, or without a token the client's address.
    func uploader(_ user: User?, _ request: Request, _ context: SpotRequestContext) -> String {
        user.map { "user \($0.uid)" } ?? "address \(addressing.clientAddress(connection: context.clientAddress, headers: request.headers))"
    }

    /// Appends `request`'s body to upload session `id` at `offset`, admitted by the gate as
    /// one of the uploads of the session's owner (a session's URL needs no token, so the
    /// request's own user or address would let one owner send past the cap from many
    /// addresses), or of `user` for an anonymous session (see `StorageService.appendToUploadSession`).
    func appendBody(
        of request: Request, _ context: SpotRequestContext, to id: String, at offset: Int64, by user: User?, checksum: ChunkChecksum? = nil
    ) async throws -> UploadSession {
        try Self.refuseTransferCodings(request)
        // With a token, the service lets only the owner go on: one read saved per chunk.
        let owner = user == nil ? try await service.catalog.uploadSession(id)?.owner : nil
        let client = owner.flatMap { $0.isEmpty ? nil : "user \($0)" } ?? uploader(user, request, context)
        return try await gate.admitting(client) {
            try await service.appendToUploadSession(
                id, at: offset, by: user, length: request.headers[.contentLength].flatMap { Int64($0) }, checksum: checksum,
                body: request.body.map { $0.readableBytesView })
        }
    }

    /// Stores the object of upload session `id`, admitted by the gate, and counts it (see
    /// `StorageService.finishUploadSession`).
    func finishSession(_ id: String, at offset: Int64? = nil, by user: User?) async throws -> StoredObject {
        let object = try await gate.admitting { try await service.finishUploadSession(id, at: offset, by: user) }
        metrics.recordUpload(bytes: object.size)
        return object
    }
}

extension HTTPField.Name {
    /// The offset of an upload (tus, the IETF draft).
    static let uploadOffset = Self("Upload-Offset")!
    /// The total size of an upload (tus, the IETF draft).
    static let uploadLength = Self("Upload-Length")!
}

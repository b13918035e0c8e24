import Access
import Foundation
import Media
import SpotCore

extension StorageService {
    /// Applies `change` to the metadata of the object at `path` (Firebase's `updateMetadata`)
    /// once the policy allows `update` with the metadata it would have, and returns the object.
    /// - Throws: `.badRequest` for a content type that contradicts the bytes (an image's type
    ///   is what its bytes are; other content may not claim an image type) and for invalid
    ///   settings; `.unsupportedMediaType` for a type the rules' `limit types` refuse;
    ///   `.notFound` once allowed when there is no object; `.conflict` when it was replaced
    ///   meanwhile.
    public func updateMetadata(of path: ObjectPath, _ change: ObjectSettings.Change, by user: User?) async throws -> StoredObject {
        let spot = try await spotState(of: path)
        let existing = try await catalog.object(at: path)
        let settings = try (existing?.settings ?? ObjectSettings()).applying(change)
        let contentType = change.contentType ?? existing?.contentType ?? "application/octet-stream"
        try ObjectSettings.validate(field: "contentType", contentType)
        let limits = try policy.authorize(AccessRequest(
            auth: user.map(Self.auth), operation: .update, bucket: path.bucket, name: path.name, spot: spot, resource: existing,
            incoming: IncomingObject(size: existing?.size ?? 0, contentType: contentType, metadata: settings.custom)))
        guard let existing else { throw SpotError(.notFound, "there is no object \(path)") }
        if contentType != existing.contentType {
            if ImageFormat(contentType: existing.contentType) != nil {
                throw SpotError(.badRequest, "\(path) is \(existing.contentType) by its bytes; its content type cannot be changed")
            }
            if ImageFormat(contentType: contentType) != nil {
                throw SpotError(.badRequest, "\(path) is not \(contentType) by its bytes; upload an image to store one")
            }
            if let refusal = limits.refusal(ofContentType: contentType) { throw refusal }
        }
        // Only if the object is still the one decided on (not replaced meanwhile).
        guard let updated = try await catalog.updateMetadata(
            of: path, generation: existing.generation, contentType: contentType, settings: settings)
        else {
            throw SpotError(.notFound, "there is no object \(path)")
        }
        return Self.seesPosition(of: spot, user) ? updated : updated.withoutPosition()
    }
}

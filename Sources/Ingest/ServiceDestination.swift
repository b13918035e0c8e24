import Access
import Foundation
import SpotCore
import SpotService

/// Ingest straight into a local store through the service, as the server would: the same
/// rules, limits, EXIF, geocoding and thumbnails.
public struct ServiceDestination: IngestDestination {
    public let service: StorageService
    public let user: User
    public let bucket: String

    public init(service: StorageService, user: User, bucket: String) {
        self.service = service
        self.user = user
        self.bucket = bucket
    }

    public func check(digests: [Digest], probe: String?) async throws -> (present: [Digest: [String]], limits: UploadLimits?) {
        try await service.ingestCheck(bucket: bucket, digests: digests, probe: probe, for: user)
    }

    public func upload(_ upload: PlannedUpload) async throws -> (digest: Digest, city: String?) {
        let stored = try await service.upload(
            try ObjectPath(bucket: bucket, name: upload.name), by: user, contentType: upload.photo.format.contentType,
            declaredSize: upload.photo.size, body: FileBytes(path: upload.photo.absolutePath)).object
        return (stored.digest, stored.photo?.place?.city)
    }
}

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
            declaredSize: upload.photo.size, body: FileBytes(path: upload.photo.absolutePath))
        return (stored.digest, stored.photo?.place?.city)
    }
}

/// A file's bytes as an async sequence of chunks of up to 1 MiB, read as they are consumed;
/// a file that cannot be opened fails the first read rather than looking empty.
public struct FileBytes: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let path: String
        let handle: FileHandle?

        public mutating func next() async throws -> [UInt8]? {
            guard let handle else { throw SpotError(.notFound, "cannot open \(path) (it vanished or is unreadable)") }
            guard let data = try handle.read(upToCount: 1 << 20), !data.isEmpty else { return nil }
            return [UInt8](data)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(path: path, handle: FileHandle(forReadingAtPath: path)) }
}

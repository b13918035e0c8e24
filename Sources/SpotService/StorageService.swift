import Access
import Foundation
import Media
import SpotCore

/// The use cases of SpotStore over its ports: authenticate, upload, read, list, delete,
/// manage users. Every request is authorised by the `AccessPolicy` first.
public struct StorageService: Sendable {
    public let catalog: any Catalog
    public let blobs: any BlobStore
    public let policy: any AccessPolicy
    /// Names the place of each photo's GPS position; `nil` leaves photos without places.
    public let geocoder: (any ReverseGeocoder)?
    public let configuration: ServiceConfiguration
    /// Told how long image analysis takes; `nil` (the default) tells no one.
    public var observer: (any ServiceObserver)?
    /// Verifies ID tokens (Firebase Auth, OpenID Connect); `nil` (the default) accepts
    /// SpotStore's own tokens only.
    public var identities: (any IdentityVerifier)?
    let writer: BlobWriter
    let analyzer: PhotoAnalyzer
    let coordinator = UploadCoordinator()
    let guardedBlobs: GuardedBlobs
    let uploads: ResumableUploads
    let imageWork: OffPoolRunner

    /// Creates the temporary directory if needed.
    public init(
        catalog: any Catalog, blobs: any BlobStore, policy: any AccessPolicy, geocoder: (any ReverseGeocoder)? = nil,
        configuration: ServiceConfiguration
    ) throws {
        self.catalog = catalog
        self.blobs = blobs
        self.policy = policy
        self.geocoder = geocoder
        self.configuration = configuration
        let writer = try BlobWriter(temporaryDirectory: configuration.temporaryDirectory)
        self.writer = writer
        let guardedBlobs = GuardedBlobs(catalog: catalog, blobs: blobs, leaseDuration: configuration.leaseDuration, now: configuration.now)
        self.guardedBlobs = guardedBlobs
        // Upload sessions keep their bytes in files where the configuration names a directory
        // for them, else as chunk blobs; a session whose chunks are blobs goes on as blobs.
        let chunkBlobs = UploadChunkBlobs(guardedBlobs: guardedBlobs, writer: writer)
        let byteStores: [any UploadByteStore] = try configuration.uploadSessionDirectory.map {
            [try UploadSessionFiles(directory: $0, writer: writer), chunkBlobs]
        } ?? [chunkBlobs]
        self.uploads = ResumableUploads(catalog: catalog, configuration: configuration, writer: writer, byteStores: byteStores)
        self.analyzer = PhotoAnalyzer(
            thumbnailSizes: configuration.thumbnailSizes, makesWebP: true, maxPixels: configuration.maxPixels,
            maxDecodeBytes: configuration.maxDecodeBytes, decodeTimeLimit: configuration.decodeTimeLimit)
        self.imageWork = OffPoolRunner(width: configuration.imageWorkers)
    }

    /// Empties this process's temp directory: uploads and blob writes a crash of an
    /// earlier process with the same directory cut short (call once at start, before
    /// serving). Other processes' directories are never touched. Returns how many files
    /// were removed.
    @discardableResult
    public func sweepTemporaryFiles() throws -> Int {
        try FileManager.default.removeContents(ofDirectory: configuration.temporaryDirectory)
    }

    // MARK: Internals

    static func auth(_ user: User) -> Auth { Auth(uid: user.uid, claims: user.claims, tokenClaims: user.idToken?.claims ?? [:]) }

    /// The object at `path` and its spot, once the policy allows `operation` on it.
    /// - Throws: the policy's refusal, or `.notFound` (only once the request is allowed,
    ///   so a refusal does not tell whether an object exists).
    func authorizedObject(_ operation: Access.Operation, at path: ObjectPath, for user: User?) async throws -> (StoredObject, SpotState?) {
        let spot = try await spotState(of: path)
        let existing = try await catalog.object(at: path)
        _ = try policy.authorize(AccessRequest(
            auth: user.map(Self.auth), operation: operation, bucket: path.bucket, name: path.name, spot: spot, resource: existing))
        guard let existing else { throw SpotError(.notFound, "there is no object \(path)") }
        return (existing, spot)
    }

    /// The object at `path` once the policy allows `user` to get it, with its spot and the
    /// damage marks of its blobs, all from one catalog read (`Catalog.objectForReading`).
    /// - Throws: as `authorizedObject(.get, …)`.
    func readableObject(at path: ObjectPath, for user: User?) async throws -> (StoredObject, SpotState?, [SpotCore.Digest: String]) {
        let reading = try await catalog.objectForReading(at: path)
        _ = try policy.authorize(AccessRequest(
            auth: user.map(Self.auth), operation: .get, bucket: path.bucket, name: path.name, spot: reading.spot, resource: reading.object))
        guard let object = reading.object else { throw SpotError(.notFound, "there is no object \(path)") }
        return (object, reading.spot, reading.damage)
    }

    func authorizeListing(bucket: String, prefix: String, for user: User?) throws {
        try ObjectPath.validate(bucket: bucket)
        _ = try policy.authorize(AccessRequest(auth: user.map(Self.auth), operation: .list, bucket: bucket, name: prefix))
    }

    func spotState(of path: ObjectPath) async throws -> SpotState? {
        guard let spotID = path.topFolder else { return nil }
        return try await catalog.spot(bucket: path.bucket, id: spotID)
    }
}

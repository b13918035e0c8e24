import Access
import Foundation
import Media
import SpotCore

/// Settings of the storage use cases; defaults are the service's.
public struct ServiceConfiguration: Sendable {
    /// Uploads in flight are written here; it must be on the blob store's file system.
    public var temporaryDirectory: String
    /// Thumbnail long edges made for every image.
    public var thumbnailSizes: [Int]
    /// Images with more pixels are refused before decoding.
    public var maxPixels: Int

    /// How many images are decoded at once; more uploads wait their turn.
    public var imageWorkers: Int
    /// The secret for signed download URLs; `nil` disables them.
    public var signingKey: [UInt8]?

    public init(
        temporaryDirectory: String, thumbnailSizes: [Int] = [256, 1024], maxPixels: Int = 100_000_000,
        imageWorkers: Int = ProcessInfo.processInfo.activeProcessorCount, signingKey: [UInt8]? = nil
    ) {
        self.signingKey = signingKey
        self.temporaryDirectory = temporaryDirectory
        self.thumbnailSizes = thumbnailSizes
        self.maxPixels = maxPixels
        self.imageWorkers = imageWorkers
    }
}

/// The use cases of SpotStore over its ports: authenticate, upload, read, list, delete,
/// manage users. Every request is authorised by the `AccessPolicy` first.
public struct StorageService: Sendable {
    public let catalog: any Catalog
    public let blobs: any BlobStore
    public let policy: any AccessPolicy
    /// Names the place of each photo's GPS position; `nil` leaves photos without places.
    public let geocoder: (any ReverseGeocoder)?
    public let configuration: ServiceConfiguration
    let writer: BlobWriter
    let analyzer: PhotoAnalyzer
    let coordinator = UploadCoordinator()
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
        self.writer = try BlobWriter(temporaryDirectory: configuration.temporaryDirectory)
        self.analyzer = PhotoAnalyzer(thumbnailSizes: configuration.thumbnailSizes, maxPixels: configuration.maxPixels)
        self.imageWork = OffPoolRunner(width: configuration.imageWorkers)
    }

    /// Removes every leftover upload from the temporary directory (call once at start,
    /// before serving). Returns how many files were removed.
    @discardableResult
    public func sweepTemporaryFiles() throws -> Int {
        let names = try FileManager.default.contentsOfDirectory(atPath: configuration.temporaryDirectory)
        for name in names {
            try FileManager.default.removeItem(atPath: "\(configuration.temporaryDirectory)/\(name)")
        }
        return names.count
    }

    // MARK: Users

    /// The user holding `token`.
    /// - Throws: `SpotError(.unauthenticated)` when the token is missing or not live.
    public func authenticate(token: String?) async throws -> User {
        guard let token, !token.isEmpty else {
            throw SpotError(.unauthenticated, "sign in: send 'Authorization: Bearer <token>' (create one with `spotstore users add UID`)")
        }
        guard let user = try await catalog.user(tokenDigest: Tokens.digest(of: token)) else {
            throw SpotError(.unauthenticated, "the token is not valid (it may have been revoked)")
        }
        return user
    }

    /// Creates `uid` and returns it with its first token, which is not stored anywhere.
    public func addUser(_ uid: String) async throws -> (user: User, token: String) {
        try User.validate(uid: uid)
        let token = Tokens.generate()
        return (try await catalog.addUser(uid, tokenDigest: Tokens.digest(of: token)), token)
    }

    /// A new token for an existing user.
    public func issueToken(for uid: String) async throws -> String {
        let token = Tokens.generate()
        guard try await catalog.addToken(for: uid, tokenDigest: Tokens.digest(of: token)) else {
            throw SpotError(.notFound, "there is no user '\(uid)'")
        }
        return token
    }

    /// Makes every token of `uid` stop working at once; its objects stay.
    public func revokeTokens(of uid: String) async throws {
        guard try await catalog.revokeTokens(of: uid) else { throw SpotError(.notFound, "there is no user '\(uid)'") }
    }

    public func users() async throws -> [User] { try await catalog.users() }

    // MARK: Objects

    /// Stores `body` at `path` for `user` and returns the committed object.
    ///
    /// Order: authorise; refuse a declared size over the limit; reserve a slot in the spot
    /// (refused uploads never read their body); stream to a temp file, hashing, stopping at
    /// the size limit; sniff the bytes; for images read EXIF and make thumbnails (reused
    /// when the same bytes were stored before); move the blob in; commit, re-checking limits.
    /// - Parameters:
    ///   - contentType: the client's claim, used only for content that is not a known image.
    ///   - declaredSize: the Content-Length, if any; never trusted beyond an early refusal.
    public func upload<Body: AsyncSequence>(
        _ path: ObjectPath, by user: User, contentType: String?, declaredSize: Int64?, body: Body
    ) async throws -> StoredObject where Body.Element: Collection, Body.Element.Element == UInt8 {
        let spot = try await spotState(of: path)
        let existing = try await catalog.object(at: path)
        guard let limits = try authorize(.write, path, for: user, spot: spot) else {
            throw SpotError(.internal, "the access policy allowed a write without limits")
        }
        if let declaredSize, declaredSize > limits.maxBytes {
            throw SpotError(.tooLarge, "the upload is \(declaredSize) bytes; the limit for this path is \(BlobWriter.describe(bytes: limits.maxBytes))")
        }
        var reservation: UploadCoordinator.Reservation?
        if let limit = limits.maxObjectsPerSpot, existing == nil, let spotID = path.topFolder {
            reservation = try await coordinator.reserve(bucket: path.bucket, spotID: spotID, existing: spot?.objectCount ?? 0, limit: limit)
        }
        do {
            let staged = try await writer.stage(body, maxBytes: limits.maxBytes)
            let object: StoredObject
            do {
                object = try await store(staged, at: path, owner: user.uid, contentType: contentType, limits: limits)
            } catch {
                try? FileManager.default.removeItem(atPath: staged.path)
                throw error
            }
            if let reservation { await coordinator.release(reservation) }
            return object
        } catch {
            if let reservation { await coordinator.release(reservation) }
            throw error
        }
    }

    /// The object at `path`, if `user` may read it.
    public func object(at path: ObjectPath, for user: User) async throws -> StoredObject {
        _ = try authorize(.read, path, for: user, spot: try await spotState(of: path))
        guard let object = try await catalog.object(at: path) else {
            throw SpotError(.notFound, "there is no object \(path)")
        }
        return object
    }

    /// The thumbnail of the object at `path` with long edge `size`.
    public func thumbnail(of path: ObjectPath, size: Int, for user: User) async throws -> Thumbnail {
        let object = try await object(at: path, for: user)
        guard let thumbnail = object.thumbnails.first(where: { $0.size == size }) else {
            let sizes = object.thumbnails.map { String($0.size) }
            throw SpotError(.notFound, sizes.isEmpty
                ? "\(path) has no thumbnails (only images in image buckets get them)"
                : "\(path) has no \(size) px thumbnail; sizes: \(sizes.joined(separator: ", "))")
        }
        return thumbnail
    }

    /// The bytes of blob `digest` in `range`, in chunks, read as the consumer asks.
    public func contents(of digest: Digest, range: Range<Int64>) -> BlobChunks {
        BlobChunks(blobs: blobs, digest: digest, range: range)
    }

    /// Deletes the object at `path` if `user` may, and returns it.
    public func delete(_ path: ObjectPath, by user: User) async throws -> StoredObject {
        _ = try authorize(.delete, path, for: user, spot: try await spotState(of: path))
        guard let removed = try await catalog.removeObject(at: path) else {
            throw SpotError(.notFound, "there is no object \(path)")
        }
        return removed
    }

    /// One page of a listing, if `user` may list `query.prefix`.
    public func list(_ query: ListQuery, for user: User) async throws -> Listing {
        try authorizeListing(bucket: query.bucket, prefix: query.prefix, for: user)
        return try await catalog.list(query)
    }

    // MARK: Signed URLs

    /// The `expires` and `signature` query values of a download URL for `path`, valid for
    /// `lifetime` seconds. Only the object's owner may sign.
    public func signDownload(of path: ObjectPath, lifetime: TimeInterval, by user: User, now: Date = Date()) async throws -> (expires: Int64, signature: String) {
        let signer = try signer()
        guard lifetime > 0, lifetime <= URLSigner.maxLifetime else {
            throw SpotError(.badRequest, "a signed URL lives from 1 second to 7 days")
        }
        let object = try await object(at: path, for: user)
        guard object.owner == user.uid else {
            throw SpotError(.forbidden, "only the owner of \(path) (\(object.owner)) may sign download URLs for it")
        }
        let expires = Int64((now.timeIntervalSince1970 + lifetime).rounded(.up))
        return (expires, signer.signature(for: path, expires: expires))
    }

    /// The object a signed download URL names, after checking its signature and expiry.
    /// - Throws: `.forbidden` when altered or expired; `.notFound` when the object is gone.
    public func object(at path: ObjectPath, signature: String, expires: Int64) async throws -> StoredObject {
        try signer().verify(signature, for: path, expires: expires)
        guard let object = try await catalog.object(at: path) else {
            throw SpotError(.notFound, "there is no object \(path)")
        }
        return object
    }

    private func signer() throws(SpotError) -> URLSigner {
        guard let key = configuration.signingKey else {
            throw SpotError(.notFound, "signed URLs are not enabled on this server")
        }
        return URLSigner(key: key)
    }

    // MARK: Spots

    /// The spot `id` in `bucket`, if `user` may list it.
    public func spot(bucket: String, id: String, for user: User) async throws -> SpotDetails {
        guard !id.contains("/"), (try? ObjectPath(bucket: bucket, name: id)) != nil else {
            throw SpotError(.badRequest, "'\(id)' is not a spot id: a spot is one folder name directly under the bucket")
        }
        try authorizeListing(bucket: bucket, prefix: "\(id)/", for: user)
        guard let spot = try await catalog.spotDetails(bucket: bucket, id: id) else {
            throw SpotError(.notFound, "there is no spot \(bucket)/\(id)")
        }
        return spot
    }

    /// Applies the owner's name, description or city override to a spot.
    /// - Throws: `.forbidden` for anyone but the spot's owner; `.notFound` for a missing spot.
    public func updateSpot(bucket: String, id: String, changes: SpotChanges, by user: User) async throws -> SpotDetails {
        let spot = try await self.spot(bucket: bucket, id: id, for: user)
        guard spot.owner == user.uid else {
            throw SpotError(.forbidden, "spot '\(id)' belongs to \(spot.owner); only its owner may change it")
        }
        return try await catalog.updateSpot(bucket: bucket, id: id, changes: changes)
    }

    /// Spots by city or near a point, if `user` may list the bucket.
    public func findSpots(_ query: SpotQuery, for user: User) async throws -> SpotPage {
        try authorizeListing(bucket: query.bucket, prefix: "", for: user)
        return try await catalog.findSpots(query)
    }

    // MARK: Internals

    /// The policy's decision on `operation` at `path`: its limits for a write, or `.forbidden`.
    private func authorize(_ operation: Access.Operation, _ path: ObjectPath, for user: User, spot: SpotState?) throws(SpotError) -> UploadLimits? {
        try policy.authorize(AccessRequest(uid: user.uid, operation: operation, bucket: path.bucket, name: path.name, spot: spot))
    }

    private func authorizeListing(bucket: String, prefix: String, for user: User) throws {
        try ObjectPath.validate(bucket: bucket)
        _ = try policy.authorize(AccessRequest(uid: user.uid, operation: .list, bucket: bucket, name: prefix))
    }

    private func spotState(of path: ObjectPath) async throws -> SpotState? {
        guard let spotID = path.topFolder else { return nil }
        return try await catalog.spot(bucket: path.bucket, id: spotID)
    }

    /// Sniffs, analyses, moves the blob in and commits.
    private func store(_ staged: StagedBlob, at path: ObjectPath, owner: String, contentType: String?, limits: UploadLimits) async throws -> StoredObject {
        let format = ImageSniffer.format(of: staged.head)
        if let allowed = limits.allowedContentTypes, !allowed.contains(format?.contentType ?? "") {
            let what = staged.size == 0 ? "the body is empty" : "the bytes are not \(allowed.sorted().joined(separator: " or "))"
            throw SpotError(.unsupportedMediaType, "\(path.bucket) accepts only \(allowed.sorted().joined(separator: ", ")); \(what)")
        }
        var photo: PhotoMetadata?
        var thumbnails: [Thumbnail] = []
        if limits.makesThumbnails, format != nil {
            if let known = try await catalog.photoDetails(of: staged.digest) {
                (photo, thumbnails) = known
            } else {
                (photo, thumbnails) = try await analyze(staged)
            }
        }
        try await blobs.store(fileAt: staged.path, as: staged.digest)
        let object = NewObject(
            path: path, digest: staged.digest, size: staged.size,
            contentType: format?.contentType ?? contentType ?? "application/octet-stream",
            owner: owner, photo: photo, thumbnails: thumbnails)
        return try await catalog.commit(object, spotLimit: limits.maxObjectsPerSpot)
    }

    /// EXIF and thumbnails of a staged image; thumbnails are stored as blobs.
    private func analyze(_ staged: StagedBlob) async throws -> (PhotoMetadata, [Thumbnail]) {
        let analyzer = self.analyzer
        let path = staged.path
        let analysis = try await imageWork.run {
            try analyzer.analyze([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        var metadata = analysis.metadata
        if let location = metadata.location, location.isValidPosition {
            metadata.place = geocoder?.place(latitude: location.latitude, longitude: location.longitude)
        } else {
            metadata.location = nil  // NaN, out of range or the (0, 0) of a camera without a fix
        }
        var thumbnails: [Thumbnail] = []
        for encoded in analysis.thumbnails {
            let digest = BlobWriter.digest(of: encoded.bytes)
            try await blobs.store(encoded.bytes, as: digest)
            thumbnails.append(Thumbnail(
                size: encoded.size, digest: digest, width: encoded.width, height: encoded.height,
                byteCount: encoded.bytes.count, contentType: encoded.contentType))
        }
        return (metadata, thumbnails)
    }
}

/// A blob's bytes in a range, read in chunks of at most 256 KiB as they are consumed.
public struct BlobChunks: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    let blobs: any BlobStore
    let digest: Digest
    let range: Range<Int64>

    public struct AsyncIterator: AsyncIteratorProtocol {
        let blobs: any BlobStore
        let digest: Digest
        var offset: Int64
        let end: Int64

        public mutating func next() async throws -> [UInt8]? {
            guard offset < end else { return nil }
            let count = Int(Swift.min(end - offset, 256 * 1024))
            guard let bytes = try await blobs.read(digest, offset: offset, count: count), !bytes.isEmpty else {
                throw SpotError(.internal, "blob \(digest) is missing or shorter than the catalog says; run `spotstore fsck`")
            }
            offset += Int64(bytes.count)
            return bytes
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(blobs: blobs, digest: digest, offset: range.lowerBound, end: range.upperBound)
    }
}

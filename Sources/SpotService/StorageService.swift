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
    /// Told how long image analysis takes; `nil` (the default) tells no one.
    public var observer: (any ServiceObserver)?
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

    /// Removes every leftover of writes a crash cut short: uploads in the temporary
    /// directory and blobs half written by the blob store (call once at start, before
    /// serving). Returns how many files were removed.
    @discardableResult
    public func sweepTemporaryFiles() throws -> Int {
        try FileManager.default.removeContents(ofDirectory: configuration.temporaryDirectory) + blobs.removeInterruptedWrites()
    }

    // MARK: Users

    /// The user holding `token`, or `nil` (anonymous) when there is no token: the rules
    /// decide what anonymous requests may do.
    /// - Throws: `SpotError(.unauthenticated)` when a token is given and not live.
    public func authenticate(token: String?) async throws -> User? {
        guard let token else { return nil }
        guard !token.isEmpty, let user = try await catalog.user(tokenDigest: Tokens.digest(of: token)) else {
            throw SpotError(.unauthenticated, "the token is not valid (it may have been revoked)")
        }
        return user
    }

    /// Creates `uid` with `claims` and returns it with its first token, which is not stored anywhere.
    public func addUser(_ uid: String, claims: [String: String] = [:]) async throws -> (user: User, token: String) {
        try User.validate(uid: uid)
        for (key, value) in claims { try User.validate(claim: key, value: value) }
        let token = Tokens.generate()
        var user = try await catalog.addUser(uid, tokenDigest: Tokens.digest(of: token))
        if !claims.isEmpty { user = try await updateClaims(of: uid, claims) }
        return (user, token)
    }

    /// Sets claims of `uid` (a `nil` value removes one); the rules see them at once.
    public func updateClaims(of uid: String, _ changes: [String: String?]) async throws -> User {
        for (key, value) in changes { try User.validate(claim: key, value: value) }
        guard let user = try await catalog.updateClaims(of: uid, changes) else {
            throw SpotError(.notFound, "there is no user '\(uid)'")
        }
        return user
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
    /// Order: the policy decides on the declared size and content type, against the spot
    /// as it will be once the uploads in flight commit, and gives the limits (refused
    /// uploads never read their body); a declared size over the limit is refused; the
    /// body streams to a temp file, hashing, stopping at the size limit; the bytes are
    /// sniffed and the policy decides again on the real size and type; images get EXIF
    /// and thumbnails (reused when the same bytes were stored before); the blob moves
    /// in; the catalog commits, re-checking the spot count.
    /// - Parameters:
    ///   - contentType: the client's claim, used only for content that is not a known image.
    ///   - declaredSize: the Content-Length, if any; never trusted beyond an early refusal.
    public func upload<Body: AsyncSequence>(
        _ path: ObjectPath, by user: User?, contentType: String?, declaredSize: Int64?, body: Body
    ) async throws -> StoredObject where Body.Element: Collection, Body.Element.Element == UInt8 {
        let existing = try await catalog.object(at: path)
        let claimedType = contentType ?? "application/octet-stream"
        var request = AccessRequest(
            auth: user.map(Self.auth), operation: existing == nil ? .create : .update, bucket: path.bucket, name: path.name,
            resource: existing, incoming: IncomingObject(size: declaredSize ?? 0, contentType: claimedType))
        let policy = self.policy
        let claimed = request
        let admit = { @Sendable (spot: SpotState?) throws(SpotError) -> UploadLimits in
            var asked = claimed
            asked.spot = spot
            let limits = try policy.authorize(asked)
            if let refusal = limits.refusal(size: declaredSize, contentType: nil, spot: spot, isNewObject: existing == nil) {
                throw refusal
            }
            return limits
        }
        let limits: UploadLimits
        var reservation: UploadCoordinator.Reservation?
        if let spotID = path.topFolder {
            let admitted = try await coordinator.admit(
                bucket: path.bucket, spotID: spotID, committed: try await spotState(of: path),
                uploader: user?.uid ?? "", isNewObject: existing == nil, decide: admit)
            (limits, request.spot, reservation) = admitted
        } else {
            limits = try admit(nil)
        }
        do {
            let staged = try await writer.stage(body, maxBytes: limits.maxBytes)
            let object: StoredObject
            do {
                object = try await store(staged, at: path, owner: user?.uid ?? "", claimedType: claimedType, limits: limits, request: request)
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

    /// The object at `path`, if `user` may get it; without its position when its spot hides it from `user`.
    public func object(at path: ObjectPath, for user: User?) async throws -> StoredObject {
        let (object, spot, _) = try await readableObject(at: path, for: user)
        return Self.seesPosition(of: spot, user) ? object : object.withoutPosition()
    }

    /// The thumbnail of the object at `path` with long edge `size`; `.internal` ("damaged: …")
    /// when `fsck --repair` marked its blob damaged.
    public func thumbnail(of path: ObjectPath, size: Int, for user: User?) async throws -> Thumbnail {
        let (object, _, damage) = try await readableObject(at: path, for: user)
        guard let thumbnail = object.thumbnails.first(where: { $0.size == size }) else {
            let sizes = object.thumbnails.map { String($0.size) }
            throw SpotError(.notFound, sizes.isEmpty
                ? "\(path) has no thumbnails (only images in image buckets get them)"
                : "\(path) has no \(size) px thumbnail; sizes: \(sizes.joined(separator: ", "))")
        }
        if let reason = damage[thumbnail.digest] {
            throw Self.damaged(thumbnail.digest, of: "the \(size) px thumbnail of \(path)", reason: reason)
        }
        return thumbnail
    }

    /// The bytes of the object at `path` as `user` may see them (see `download(of:spot:for:)`).
    public func download(at path: ObjectPath, for user: User?) async throws -> Download {
        let (object, spot, damage) = try await readableObject(at: path, for: user)
        return try await download(of: object, spot: spot, for: user, damage: damage)
    }

    /// The bytes of blob `digest` in `range`, in chunks, read as the consumer asks.
    public func contents(of digest: Digest, range: Range<Int64>) -> BlobChunks {
        BlobChunks(blobs: blobs, digest: digest, range: range)
    }

    /// Deletes the object at `path` if `user` may, and returns it.
    public func delete(_ path: ObjectPath, by user: User?) async throws -> StoredObject {
        _ = try await authorizedObject(.delete, at: path, for: user)
        guard let removed = try await catalog.removeObject(at: path) else {
            throw SpotError(.notFound, "there is no object \(path)")
        }
        return removed
    }

    /// One page of a listing, if `user` may list `query.prefix`; objects in spots that hide
    /// their position from `user` come without it.
    public func list(_ query: ListQuery, for user: User?) async throws -> Listing {
        try authorizeListing(bucket: query.bucket, prefix: query.prefix, for: user)
        var listing = try await catalog.list(query)
        var hidden: [String: Bool] = [:]
        for (index, item) in listing.items.enumerated() where item.photo?.location != nil {
            guard let spotID = item.path.topFolder else { continue }
            if hidden[spotID] == nil {
                hidden[spotID] = !Self.seesPosition(of: try await catalog.spot(bucket: query.bucket, id: spotID), user)
            }
            if hidden[spotID] == true { listing.items[index] = item.withoutPosition() }
        }
        return listing
    }

    /// The most digests one `ingestCheck` may ask about.
    public static let maxDigestsPerCheck = 1000

    /// What a bulk import asks before uploading: which of `digests` `user` already stores
    /// in `bucket` (with the names holding them), and the limits of a new object at
    /// `probe` (a name in the bucket), whether or not the rules would allow it.
    /// - Throws: `.unauthenticated` without a user; `.badRequest` for more than
    ///   `maxDigestsPerCheck` digests or an invalid bucket or probe.
    public func ingestCheck(bucket: String, digests: [Digest], probe: String?, for user: User?) async throws -> (present: [Digest: [String]], limits: UploadLimits?) {
        guard let user else { throw SpotError(.unauthenticated, "sign in to ask which photos you already stored") }
        try ObjectPath.validate(bucket: bucket)
        guard digests.count <= Self.maxDigestsPerCheck else {
            throw SpotError(.badRequest, "ask about at most \(Self.maxDigestsPerCheck) digests per request, not \(digests.count)")
        }
        var limits: UploadLimits?
        if let probe {
            let path = try ObjectPath(bucket: bucket, name: probe)
            let request = AccessRequest(
                auth: Self.auth(user), operation: .create, bucket: bucket, name: path.name,
                spot: try await spotState(of: path), incoming: IncomingObject(size: 0, contentType: "image/jpeg"))
            limits = policy.decide(request).limits
        }
        return (try await catalog.names(ofDigests: digests, ownedBy: user.uid, in: bucket), limits)
    }

    // MARK: Spots

    /// The spot `id` in `bucket`, if `user` may list it; only the city when it hides its position from `user`.
    public func spot(bucket: String, id: String, for user: User?) async throws -> SpotDetails {
        guard !id.contains("/"), (try? ObjectPath(bucket: bucket, name: id)) != nil else {
            throw SpotError(.badRequest, "'\(id)' is not a spot id: a spot is one folder name directly under the bucket")
        }
        try authorizeListing(bucket: bucket, prefix: "\(id)/", for: user)
        guard let spot = try await catalog.spotDetails(bucket: bucket, id: id) else {
            throw SpotError(.notFound, "there is no spot \(bucket)/\(id)")
        }
        return Self.asSeen(spot, by: user)
    }

    /// Applies the owner's name, description, city override or hiding of the position to a spot.
    /// - Throws: `.forbidden` for anyone but the spot's owner; `.notFound` for a missing spot.
    public func updateSpot(bucket: String, id: String, changes: SpotChanges, by user: User?) async throws -> SpotDetails {
        let spot = try await self.spot(bucket: bucket, id: id, for: user)
        guard let user else { throw SpotError(.unauthenticated, "sign in to change spot '\(id)'") }
        guard spot.owner == user.uid else {
            throw SpotError(.forbidden, "spot '\(id)' belongs to \(spot.owner); only its owner may change it")
        }
        return try await catalog.updateSpot(bucket: bucket, id: id, changes: changes)
    }

    /// Spots by city or near a point, if `user` may list the bucket. Spots hiding their
    /// position never match `near` and show others only their city.
    public func findSpots(_ query: SpotQuery, for user: User?) async throws -> SpotPage {
        try authorizeListing(bucket: query.bucket, prefix: "", for: user)
        var page = try await catalog.findSpots(query)
        page.spots = page.spots.map { Self.asSeen($0, by: user) }
        return page
    }

    // MARK: Internals

    static func auth(_ user: User) -> Auth { Auth(uid: user.uid, claims: user.claims) }

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

    private func authorizeListing(bucket: String, prefix: String, for user: User?) throws {
        try ObjectPath.validate(bucket: bucket)
        _ = try policy.authorize(AccessRequest(auth: user.map(Self.auth), operation: .list, bucket: bucket, name: prefix))
    }

    func spotState(of path: ObjectPath) async throws -> SpotState? {
        guard let spotID = path.topFolder else { return nil }
        return try await catalog.spot(bucket: path.bucket, id: spotID)
    }

    /// Sniffs, asks the policy again with the real size and type, analyses, moves the blob in and commits.
    private func store(
        _ staged: StagedBlob, at path: ObjectPath, owner: String, claimedType: String, limits: UploadLimits, request: AccessRequest
    ) async throws -> StoredObject {
        let format = ImageSniffer.format(of: staged.head)
        // The bytes decide; a claim to be an image format they are not is not believed.
        let contentType = format?.contentType ?? (ImageFormat(contentType: claimedType) != nil ? "application/octet-stream" : claimedType)
        let judged = staged.size == 0 ? "empty" : contentType
        if let refusal = limits.refusal(size: nil, contentType: judged, spot: nil, isNewObject: false) { throw refusal }
        var received = request
        received.incoming = IncomingObject(size: staged.size, contentType: contentType)
        _ = try policy.authorize(received)
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
        // The same bytes again replace a blob fsck quarantined: it is whole once more.
        if try await catalog.damage(of: staged.digest) != nil { try await catalog.clearDamage(of: staged.digest) }
        let object = NewObject(
            path: path, digest: staged.digest, size: staged.size, contentType: contentType,
            owner: owner, photo: photo, thumbnails: thumbnails)
        return try await catalog.commit(object, spotLimit: limits.maxObjectsPerSpot)
    }

    /// EXIF and thumbnails of a staged image; thumbnails are stored as blobs.
    private func analyze(_ staged: StagedBlob) async throws -> (PhotoMetadata, [Thumbnail]) {
        let analyzer = self.analyzer
        let path = staged.path
        let started = ContinuousClock.now
        defer { observer?.analyzedImage(in: ContinuousClock.now - started) }
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

    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
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

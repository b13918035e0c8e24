import Access
import Foundation
import Media
import SpotCore

/// An upload the policy allowed before its body was read.
struct AuthorizedUpload: Sendable {
    var path: ObjectPath
    /// The uploader's uid; `""` for anonymous uploads.
    var owner: String
    /// The request as the policy decided it: declared size, claimed type, the spot with
    /// the uploads in flight counted.
    var request: AccessRequest
    var limits: UploadLimits
    /// What the decision assumed about the spot, for the catalog's commit to check.
    var admission: SpotAdmission
    /// The slot held in the spot's in-process count until the upload ends.
    var reservation: UploadCoordinator.Reservation?
    /// The owner's download-token epoch as their sign-in read it, for the token the upload
    /// makes; `nil` reads it when the token is made (a session finished later).
    var ownerEpoch: Int?
}

/// What an upload says about the object besides its bytes.
public struct UploadDetails: Sendable, Equatable, Codable {
    public var settings: ObjectSettings
    /// The MD5 the client says the bytes have (Firebase's `md5Hash`); a mismatch stores nothing.
    public var md5: [UInt8]?

    public init(settings: ObjectSettings = ObjectSettings(), md5: [UInt8]? = nil) {
        self.settings = settings
        self.md5 = md5
    }
}

/// An object as its upload stored it, with the download token the upload made: its
/// uploader's answer needs no second read of the object to find the token live.
public struct UploadedObject: Sendable {
    /// The object as its commit stored it.
    public var object: StoredObject
    /// The token made on upload (Firebase's `downloadTokens`); `nil` when the object's
    /// rules or the store make none.
    public var downloadToken: String?
}

/// Staged bytes once sniffed and allowed again for what they really are.
struct JudgedUpload: Sendable {
    var staged: StagedBlob
    /// Decided by the bytes for images; the client's claim otherwise.
    var contentType: String
    var format: ImageFormat?
}

/// What image analysis found: photo metadata and thumbnails, with the thumbnail bytes not
/// yet stored (none when the same bytes were analysed before).
struct UploadAnalysis: Sendable {
    var photo: PhotoMetadata?
    var thumbnails: [Thumbnail] = []
    var newThumbnails: [(digest: SpotCore.Digest, bytes: [UInt8])] = []
}

extension StorageService {
    /// Stores `body` at `path` for `user` and returns the committed object.
    ///
    /// One value flows through the steps: authorize (the policy decides on the declared
    /// size and type against the spot as it will be once the uploads in flight commit; a
    /// refused upload never reads its body) → stage (the body streams to a temp file,
    /// hashing, stopping at the size limit) → judge (the bytes are sniffed and the policy
    /// decides again on what they are) → analyze (EXIF, place, thumbnails, reused when
    /// the same bytes were stored before) → put (a lease in the catalog, then the blobs) →
    /// commit (the catalog decides admission to the spot in the transaction that writes).
    /// - Parameters:
    ///   - contentType: the client's claim, used only for content that is not a known image.
    ///   - declaredSize: the Content-Length, if any; never trusted beyond an early refusal.
    ///   - details: settings and the MD5 the client expects, if any.
    public func upload<Body: AsyncSequence>(
        _ path: ObjectPath, by user: User?, contentType: String?, declaredSize: Int64?, details: UploadDetails = UploadDetails(),
        body: Body
    ) async throws -> UploadedObject where Body.Element: Collection, Body.Element.Element == UInt8 {
        try details.settings.validate()
        if let contentType { try ObjectSettings.validate(field: "contentType", contentType) }
        let authorized = try await authorizeUpload(
            path, by: user, contentType: contentType ?? "application/octet-stream", declaredSize: declaredSize,
            metadata: details.settings.custom)
        do {
            let staged = try await writer.stage(body, maxBytes: authorized.limits.maxBytes)
            let uploaded = try await complete(staged, authorized, details: details, session: nil)
            if let reservation = authorized.reservation { await coordinator.release(reservation) }
            return uploaded
        } catch {
            if let reservation = authorized.reservation { await coordinator.release(reservation) }
            throw error
        }
    }

    /// Judge, analyze, put and commit `staged` (removed on failure); `session` is the upload
    /// session the commit completes, if any.
    func complete(_ staged: StagedBlob, _ authorized: AuthorizedUpload, details: UploadDetails, session: String?) async throws -> UploadedObject {
        do {
            if let expected = details.md5, expected != staged.md5 {
                throw SpotError(.badRequest, "the bytes received do not have the md5Hash the client gave; nothing was stored")
            }
            let judged = try judge(staged, authorized)
            let analysis = try await analyze(judged, makesThumbnails: authorized.limits.makesThumbnails, for: authorized.owner)
            var new = try await put(judged, analysis, as: authorized)
            new.md5 = staged.md5
            new.settings = details.settings
            // A new generation for every upload to the name, even within one microsecond.
            let now = Int64((configuration.now().timeIntervalSince1970 * 1_000_000).rounded())
            new.generation = max(now, (authorized.request.resource?.generation ?? 0) + 1)
            new.uploadSession = session
            var epoch: Int?
            if authorized.limits.makesDownloadToken {
                if let known = authorized.ownerEpoch { epoch = known } else { epoch = try await downloadTokenEpoch(of: new.owner) }
            }
            let token = epoch.flatMap { uploadDownloadToken(of: new.path, generation: new.generation, epoch: $0) }
            new.downloadTokenDigest = token.map(Tokens.digest(of:))
            new.downloadTokenEpoch = epoch ?? 0
            let object: StoredObject
            do {
                object = try await catalog.commit(new, admission: authorized.admission)
            } catch {
                if let lease = new.lease { try? await catalog.releaseLease(lease) }
                throw error
            }
            // The commit stored the token with the object under the epoch it was made with.
            return UploadedObject(object: object, downloadToken: token)
        } catch {
            try? FileManager.default.removeItem(atPath: staged.path)
            throw error
        }
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

    /// The policy's decision on an upload before its body is read, with a slot held in
    /// its spot's in-process count (an early refusal only: the commit decides).
    func authorizeUpload(
        _ path: ObjectPath, by user: User?, contentType: String, declaredSize: Int64?, metadata: [String: String] = [:]
    ) async throws -> AuthorizedUpload {
        let (isNewObject, decide) = try await uploadDecision(
            path, by: user, contentType: contentType, declaredSize: declaredSize, metadata: metadata)
        guard let spotID = path.topFolder else { return try decide(nil) }
        let admitted = try await coordinator.admit(
            bucket: path.bucket, spotID: spotID, committed: try await catalog.spot(bucket: path.bucket, id: spotID),
            uploader: user?.uid ?? "", isNewObject: isNewObject, decide: decide)
        var authorized = admitted.decided
        authorized.reservation = admitted.reservation
        return authorized
    }

    /// How the policy decides on an upload to `path` given the state of its spot, and
    /// whether it would make a new object.
    /// - Throws: `.badRequest` when a new object would get a name that looks like another
    ///   (`UnicodeIdentity.invisibleProblem`); the policy's refusal.
    func uploadDecision(_ path: ObjectPath, by user: User?, contentType: String, declaredSize: Int64?, metadata: [String: String]) async throws
    -> (isNewObject: Bool, decide: @Sendable (SpotState?) throws(SpotError) -> AuthorizedUpload) {
        let existing = try await catalog.object(at: path)
        let isNewObject = existing == nil
        if isNewObject, let problem = UnicodeIdentity.invisibleProblem(inName: path.name) {
            throw SpotError(.badRequest, "the object name cannot be used: \(problem)")
        }
        let request = AccessRequest(
            auth: user.map(Self.auth), operation: isNewObject ? .create : .update, bucket: path.bucket, name: path.name,
            resource: existing, incoming: IncomingObject(size: declaredSize ?? 0, contentType: contentType, metadata: metadata))
        let policy = self.policy
        return (isNewObject, { @Sendable (spot: SpotState?) throws(SpotError) -> AuthorizedUpload in
            var asked = request
            asked.spot = spot
            let limits = try policy.authorize(asked)
            if let refusal = limits.refusalBeforeBody(declaredSize: declaredSize, spot: spot, isNewObject: isNewObject) { throw refusal }
            return AuthorizedUpload(
                path: path, owner: user?.uid ?? "", request: asked, limits: limits,
                admission: Self.admission(of: asked, in: path, limits: limits, policy: policy), ownerEpoch: user?.downloadTokenEpoch ?? 0)
        })
    }

    /// A uid no user can have (uids have no spaces): the owner of a spot in the question
    /// `admission(of:in:limits:policy:)` asks the policy.
    static let anotherUser = "another user"

    /// What the policy's decision on `request` assumed about the spot of `path`: the count
    /// limit, and whether it allowed the write only because the spot is absent or the
    /// uploader's — found by asking again as if another user owned the spot.
    static func admission(of request: AccessRequest, in path: ObjectPath, limits: UploadLimits, policy: any AccessPolicy) -> SpotAdmission {
        guard let spotID = path.topFolder else { return SpotAdmission() }
        var elsewhere = request
        elsewhere.spot = SpotState(
            bucket: path.bucket, id: spotID, owner: anotherUser, objectCount: request.spot?.objectCount ?? 0,
            hidesLocation: request.spot?.hidesLocation ?? false)
        return SpotAdmission(maxObjects: limits.maxObjectsPerSpot, requiresOwnership: !policy.decide(elsewhere).allowed)
    }

    /// Sniffs the staged bytes and asks the policy again with their real size and type.
    func judge(_ staged: StagedBlob, _ authorized: AuthorizedUpload) throws -> JudgedUpload {
        let format = ImageSniffer.format(of: staged.head)
        let claimed = authorized.request.incoming?.contentType ?? "application/octet-stream"
        // The bytes decide; a claim to be an image format they are not is not believed.
        let contentType = format?.contentType ?? (ImageFormat(contentType: claimed) != nil ? "application/octet-stream" : claimed)
        if let refusal = authorized.limits.refusal(ofContentType: staged.size == 0 ? "empty" : contentType) { throw refusal }
        var received = authorized.request
        received.incoming = IncomingObject(size: staged.size, contentType: contentType, metadata: received.incoming?.metadata ?? [:])
        _ = try policy.authorize(received)
        return JudgedUpload(staged: staged, contentType: contentType, format: format)
    }

    /// EXIF, place and thumbnails of an image (known ones reused, unless they were made
    /// before WebP thumbnails were); nothing for other content. The decode takes one of
    /// `owner`'s share of the image slots (`""`, anonymous uploaders, share one).
    func analyze(_ judged: JudgedUpload, makesThumbnails: Bool, for owner: String) async throws -> UploadAnalysis {
        guard makesThumbnails, judged.format != nil else { return UploadAnalysis() }
        if let known = try await catalog.photoDetails(of: judged.staged.digest),
           known.thumbnails.isEmpty || known.thumbnails.contains(where: \.isWebP) {
            return UploadAnalysis(photo: known.photo, thumbnails: known.thumbnails)
        }
        let analyzer = self.analyzer
        let path = judged.staged.path
        let started = ContinuousClock.now
        defer { observer?.analyzedImage(in: ContinuousClock.now - started) }
        let analysis = try await imageWork.run(for: owner) {
            try analyzer.analyze([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        var result = UploadAnalysis(photo: analysis.metadata)
        if let location = analysis.metadata.location, location.isValidPosition {
            result.photo?.place = geocoder?.place(latitude: location.latitude, longitude: location.longitude)
        } else {
            result.photo?.location = nil  // NaN, out of range or the (0, 0) of a camera without a fix
        }
        for encoded in analysis.thumbnails {
            let digest = BlobWriter.digest(of: encoded.bytes)
            result.newThumbnails.append((digest, encoded.bytes))
            result.thumbnails.append(Thumbnail(
                size: encoded.size, digest: digest, width: encoded.width, height: encoded.height,
                byteCount: encoded.bytes.count, contentType: encoded.contentType))
        }
        return result
    }

    /// Leases the blobs in the catalog, then stores them; the object to commit holds the lease.
    /// Bytes the catalog keeps (`CatalogKeptBlobs`) go to the commit instead, read from
    /// their staged file (which is removed), with no lease.
    func put(_ judged: JudgedUpload, _ analysis: UploadAnalysis, as authorized: AuthorizedUpload) async throws -> NewObject {
        let staged = judged.staged
        var new = NewObject(
            path: authorized.path, digest: staged.digest, size: staged.size, contentType: judged.contentType,
            owner: authorized.owner, photo: analysis.photo, thumbnails: analysis.thumbnails)
        if analysis.newThumbnails.isEmpty, let kept = blobs as? any CatalogKeptBlobs, staged.size <= kept.smallBlobLimit {
            new.smallBlob = [UInt8](try Data(contentsOf: URL(fileURLWithPath: staged.path)))
            try? FileManager.default.removeItem(atPath: staged.path)
            return new
        }
        new.lease = try await guardedBlobs.leasing([staged.digest] + analysis.newThumbnails.map(\.digest)) { lease in
            for thumbnail in analysis.newThumbnails {
                try await blobs.store(thumbnail.bytes, as: thumbnail.digest)
            }
            try await blobs.store(fileAt: staged.path, as: staged.digest)
            return lease
        }
        return new
    }
}

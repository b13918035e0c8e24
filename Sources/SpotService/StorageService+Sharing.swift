import Foundation
import Media
import SpotCore

/// The bytes a download serves: the object's blob, or its GPS-free copy.
public struct Download: Sendable, Equatable {
    public var digest: Digest
    public var size: Int64
    public var contentType: String
    /// The headers the uploader set (`Cache-Control`, `Content-Disposition`…).
    public var settings: ObjectSettings
}

extension StorageService {
    // MARK: Signed URLs

    /// The grant and signature of a download URL for `path`, valid for `lifetime` seconds
    /// and while `user` stands (not revoked, not deleted). Only the object's owner may sign.
    public func signDownload(of path: ObjectPath, lifetime: TimeInterval, by user: User?, now: Date = Date()) async throws -> (grant: DownloadGrant, signature: String) {
        let signer = try signer()
        guard lifetime > 0, lifetime <= URLSigner.maxLifetime else {
            throw SpotError(.badRequest, "a signed URL lives from 1 second to 7 days")
        }
        let object = try await ownedObject(at: path, by: user, toShare: "sign download URLs for")
        let grant = DownloadGrant(
            expires: Int64((now.timeIntervalSince1970 + lifetime).rounded(.up)), signedBy: object.owner,
            signedAt: Int64((now.timeIntervalSince1970 * 1000).rounded(.down)))
        return (grant, signer.signature(for: path, grant))
    }

    /// The bytes a signed download URL names, after checking its signature and expiry, and
    /// that its maker still stands and still owns the object.
    /// - Throws: `.forbidden` when altered, expired, or its maker was revoked or deleted
    ///   since or no longer owns the object; `.notFound` when the object is gone.
    public func download(at path: ObjectPath, signature: String, grant: DownloadGrant) async throws -> Download {
        try signer().verify(signature, for: path, grant)
        try await requireLinkMaker(grant.signedBy, madeAt: grant.signedAtDate)
        let reading = try await catalog.objectForReading(at: path)
        guard let object = reading.object else {
            throw SpotError(.notFound, "there is no object \(path)")
        }
        guard object.owner == grant.signedBy else {
            throw SpotError(.forbidden, "\(path) was replaced by another user since this link was made; ask its owner for a new link")
        }
        return try await download(of: object, spot: reading.spot, for: nil, damage: reading.damage)
    }

    /// Refuses a link `uid` made at `time` unless its maker still stands (see
    /// `requireStanding`) and is the same user (not deleted and created anew since).
    private func requireLinkMaker(_ uid: String, madeAt time: Date) async throws {
        let maker = try await requireStanding(uid, since: time, as: "the user who made this link", remedy: "ask for a new link")
        guard maker.createdAt <= time else {
            throw SpotError(.forbidden, "the user who made this link was deleted since, and \(uid) is now another user; ask for a new link")
        }
    }

    private func signer() throws(SpotError) -> URLSigner {
        guard let key = configuration.signingKey else {
            throw SpotError(.notFound, "signed URLs are not enabled on this server")
        }
        return URLSigner(key: key)
    }

    // MARK: Download tokens

    /// A new Firebase-style download token for the object at `path`, shown only now.
    /// Only the object's owner may make one.
    public func addDownloadToken(to path: ObjectPath, by user: User?) async throws -> (token: String, info: DownloadToken) {
        _ = try await ownedObject(at: path, by: user, toShare: "make download tokens for")
        let token = Tokens.generate(prefix: Tokens.requestedDownloadTokenPrefix)
        guard let info = try await catalog.addDownloadToken(Tokens.digest(of: token), to: path) else {
            throw SpotError(.notFound, "there is no object \(path)")
        }
        return (token, info)
    }

    /// The download token made on upload (Firebase's `downloadTokens`) for the object at
    /// `path` of `generation`: derived from the signing key, the path, the generation and
    /// the `downloadTokenEpoch` of its `owner` (after `users revoke --download-tokens`), so
    /// it can be shown to readers while only its digest is stored; `nil` when tokens on
    /// upload are off.
    func uploadDownloadToken(of path: ObjectPath, generation: Int64, owner: String) async throws -> String? {
        uploadDownloadToken(of: path, generation: generation, epoch: try await downloadTokenEpoch(of: owner))
    }

    /// `uploadDownloadToken(of:generation:owner:)` for the owner's `epoch`, read before.
    func uploadDownloadToken(of path: ObjectPath, generation: Int64, epoch: Int) -> String? {
        guard let key = try? downloadTokenKey() else { return nil }
        return Self.derivedDownloadToken(key: key, path, generation, epoch)
    }

    /// How many times `owner`'s download tokens were replaced (0 for an owner not stored).
    func downloadTokenEpoch(of owner: String) async throws -> Int {
        try await catalog.user(uid: owner)?.downloadTokenEpoch ?? 0
    }

    /// The token made on upload under `key` for `epoch` (0: never replaced, derived as
    /// before epochs were).
    private static func derivedDownloadToken(key: [UInt8], _ path: ObjectPath, _ generation: Int64, _ epoch: Int) -> String {
        Tokens.derived(from: key, message: "download-token\n\(path.bucket)\n\(path.name)\n\(generation)" + (epoch == 0 ? "" : "\n\(epoch)"))
    }

    /// The download token a reader of `object` sees in its metadata: the one made on upload,
    /// while it is not revoked; `nil` otherwise.
    public func visibleDownloadToken(of object: StoredObject) async throws -> String? {
        guard let token = try await uploadDownloadToken(of: object.path, generation: object.generation, owner: object.owner),
              let opened = try await catalog.object(at: object.path, downloadTokenDigest: Tokens.digest(of: token)),
              opened.generation == object.generation
        else { return nil }
        return token
    }

    /// The live download tokens of the object at `path` (ids and dates; the owner only).
    public func downloadTokens(of path: ObjectPath, by user: User?) async throws -> [DownloadToken] {
        _ = try await ownedObject(at: path, by: user, toShare: "list download tokens of")
        return try await catalog.downloadTokens(of: path) ?? []
    }

    /// Revokes download token `id` of the object at `path`; it stops working at once.
    public func revokeDownloadToken(_ id: String, of path: ObjectPath, by user: User?) async throws {
        _ = try await ownedObject(at: path, by: user, toShare: "revoke download tokens of")
        guard try await catalog.revokeDownloadToken(id, of: path) else {
            throw SpotError(.notFound, "\(path) has no download token '\(id)' (list them with alt=downloadTokens)")
        }
    }

    /// The bytes a download token opens. The token made on upload belongs to the object,
    /// as in Firebase; one made on request is the owner's link and ends with them.
    /// - Throws: `.forbidden` for a wrong, revoked or replaced token, and for one made on
    ///   request whose maker was revoked or deleted since.
    public func download(at path: ObjectPath, downloadToken: String) async throws -> Download {
        let invalid = SpotError(.forbidden, "the download token is not valid for \(path): it was revoked, or the object was replaced or deleted")
        let digest = Tokens.digest(of: downloadToken)
        guard let granted = try await catalog.object(at: path, downloadTokenDigest: digest) else { throw invalid }
        // The object as read with its spot and damage marks must still be the one the token opens.
        let reading = try await catalog.objectForReading(at: path)
        guard let object = reading.object, object.digest == granted.digest else { throw invalid }
        if downloadToken.hasPrefix(Tokens.requestedDownloadTokenPrefix) {
            // Made on request: only the owner makes those, and a replacement revokes them.
            let id = String(digest.hex.prefix(16))
            guard let made = try await catalog.downloadTokens(of: path)?.first(where: { $0.id == id }) else { throw invalid }
            try await requireLinkMaker(object.owner, madeAt: made.createdAt)
        }
        return try await download(of: object, spot: reading.spot, for: nil, damage: reading.damage)
    }

    /// Replaces the download tokens on every object `uid` owns (for when the user's token
    /// was stolen): those made on request are revoked, and the one made on upload, which
    /// apps keep in their stored photo URLs, is replaced by a new one readers see.
    /// - Returns: how many objects got a new token.
    /// - Throws: `.notFound` when there is no such user, or when this server makes no
    ///   download tokens (`serve --no-download-tokens`, or no signing key).
    public func replaceDownloadTokens(of uid: String) async throws -> Int {
        let key = try downloadTokenKey()
        let derive: @Sendable (ObjectPath, Int64, Int) -> Digest = { path, generation, epoch in
            Tokens.digest(of: Self.derivedDownloadToken(key: key, path, generation, epoch))
        }
        guard let count = try await catalog.replaceDownloadTokens(ownedBy: uid, with: derive) else { throw Self.noSuchUser(uid) }
        return count
    }

    /// The key tokens made on upload are derived with.
    /// - Throws: `.notFound` when this server makes none.
    func downloadTokenKey() throws(SpotError) -> [UInt8] {
        guard configuration.makesDownloadTokens, let key = configuration.signingKey else {
            throw SpotError(.notFound, "this server makes no download tokens (started with --no-download-tokens), so it cannot replace them")
        }
        return key
    }

    /// The object at `path` if `user` may read it and owns it.
    private func ownedObject(at path: ObjectPath, by user: User?, toShare what: String) async throws -> StoredObject {
        let (object, _) = try await authorizedObject(.get, at: path, for: user)
        guard let user else { throw SpotError(.unauthenticated, "sign in to \(what) \(path)") }
        guard object.owner == user.uid else {
            throw SpotError(.forbidden, "only the owner of \(path) (\(object.owner)) may \(what) it")
        }
        return object
    }

    // MARK: Location privacy

    /// Whether `user` may see exact positions in `spot`: unless the owner hid them, everyone.
    static func seesPosition(of spot: SpotState?, _ user: User?) -> Bool {
        guard let spot, spot.hidesLocation else { return true }
        return user?.uid == spot.owner
    }

    /// `spot` as `user` sees it: with the city only when it hides its position from them.
    static func asSeen(_ spot: SpotDetails, by user: User?) -> SpotDetails {
        guard spot.hidesLocation, user?.uid != spot.owner else { return spot }
        var seen = spot
        seen.location = nil
        seen.place?.distanceKm = nil
        seen.distanceKm = nil
        seen.objects = spot.objects.map { $0.withoutPosition() }
        return seen
    }

    /// The bytes of `object` for `user` (`nil`: someone holding a link): the stored blob,
    /// or, when `spot` hides its position from them and the object is a photo (by its
    /// bytes), a copy without GPS made once and kept as a blob.
    ///
    /// - Parameter damage: the damage marks of `object`'s blobs, read with it
    ///   (`Catalog.objectForReading`).
    /// - Throws: `.internal` ("damaged: …") when `fsck --repair` marked the blob damaged.
    func download(of object: StoredObject, spot: SpotState?, for user: User?, damage: [Digest: String]) async throws -> Download {
        if let reason = damage[object.digest] { throw Self.damaged(object.digest, of: object.path.description, reason: reason) }
        let original = Download(digest: object.digest, size: object.size, contentType: object.contentType, settings: object.settings)
        guard ImageFormat(contentType: object.contentType) != nil, !Self.seesPosition(of: spot, user) else { return original }
        if let free = try await catalog.locationFreeDigest(of: object.digest), let size = try await blobs.size(of: free) {
            return Download(digest: free, size: size, contentType: object.contentType, settings: object.settings)
        }
        guard let bytes = try await blobs.read(object.digest) else {
            throw SpotError(.internal, "blob \(object.digest) of \(object.path) is missing; run `spotstore fsck`")
        }
        guard let stripped = LocationStripper.removingLocation(from: bytes) else {
            throw SpotError(.forbidden, "this photo's position cannot be removed from its file (\(object.path)), and its spot hides positions: only the spot's owner may download the original; its thumbnails carry no position")
        }
        let free = BlobWriter.digest(of: stripped)
        try await guardedBlobs.leasing([free]) { lease in
            try await blobs.store(stripped, as: free)
            try await catalog.setLocationFreeDigest(free, of: object.digest, lease: lease)
        }
        return Download(digest: free, size: Int64(stripped.count), contentType: object.contentType, settings: object.settings)
    }
}

extension StoredObject {
    /// The object without its photo's position (its city stays, without the distance to it).
    func withoutPosition() -> StoredObject {
        var object = self
        object.photo?.location = nil
        object.photo?.place?.distanceKm = nil
        return object
    }
}

import Foundation

/// The metadata of the store: users and token digests, spots, objects, photo metadata
/// and thumbnails. The catalog is the final arbiter of limits: `commit` re-checks them
/// in the same transaction that writes, so they hold across processes and machines.
///
/// "Absent" is `nil` (or `false`), never an error.
public protocol Catalog: Sendable {
    /// Creates `uid` with one token, stored only as its SHA-256 `tokenDigest`.
    /// - Throws: `SpotError(.conflict)` when the uid exists.
    func addUser(_ uid: String, tokenDigest: Digest) async throws -> User

    /// Sets (or, with a `nil` value, removes) claims of `uid` and returns the user, or `nil`
    /// when there is no such user. Keys and values are validated by the caller.
    func updateClaims(of uid: String, _ changes: [String: String?]) async throws -> User?

    /// Gives an existing user one more token. Returns `false` when there is no such user.
    func addToken(for uid: String, tokenDigest: Digest) async throws -> Bool

    /// The user owning the token with this digest, with its claims, or `nil`.
    func user(tokenDigest: Digest) async throws -> User?

    /// Tells this process when any process has committed, so that what it keeps is dropped.
    var changes: any CatalogChangeFeed { get }

    /// Users by uid (byte order): those after `uid` when given, at most `limit` when given.
    func users(after uid: String?, limit: Int?) async throws -> [User]

    /// Grants or withdraws the admin role of `uid`; `nil` when there is no such user.
    func setAdmin(of uid: String, _ isAdmin: Bool) async throws -> User?

    /// Deletes `uid` with its tokens, claims and upload sessions (a user of the same uid made
    /// later cannot finish them); its objects and spots stay. Returns `false` when there is
    /// no such user.
    func deleteUser(_ uid: String) async throws -> Bool

    /// Deletes every token of `uid` and records the time, so that ID tokens issued before it
    /// are refused; its objects stay. Returns `false` when there is no such user.
    func revokeTokens(of uid: String) async throws -> Bool

    /// User `uid` with its claims, or `nil`.
    func user(uid: String) async throws -> User?

    /// Records that `uid` signed in with an ID token of `provider` at `time`: creates the
    /// user (without tokens of its own) when new, else sets its provider and last sign-in.
    func recordSignIn(uid: String, provider: String, at time: Date) async throws -> User

    /// The spot `id` in `bucket` with its owner and object count, or `nil` when no object was ever stored in it.
    func spot(bucket: String, id: String) async throws -> SpotState?

    /// The object at `path`, with photo metadata and thumbnails, or `nil`.
    func object(at path: ObjectPath) async throws -> StoredObject?

    /// What a read of `path` needs, in one transaction: the object (or `nil`), the state of
    /// its spot (its top folder; `nil` without one or when the spot has no row), and the
    /// damage marks of the object's blob and its thumbnails' blobs (absent when unmarked).
    func objectForReading(at path: ObjectPath) async throws -> ObjectReading

    /// Photo metadata and thumbnails already known for a blob, so an upload of the same
    /// bytes can skip image work. `nil` when the blob has none.
    func photoDetails(of digest: Digest) async throws -> (photo: PhotoMetadata, thumbnails: [Thumbnail])?

    /// Writes `object` (replacing an object at the same path) in one transaction, and
    /// brings the spot's derived location (first photo with GPS, its place, whether the
    /// photos are more than 1 km apart) up to date in the same transaction.
    ///
    /// When `object.path` is in a spot (`topFolder` is non-nil), that transaction decides
    /// admission: the spot is created owned by `object.owner` if absent; otherwise
    /// `admission.refusal(of:into:isReplacement:)` on the spot as it is now refuses with
    /// `.forbidden` (owned by another user while `requiresOwnership`) or `.conflict` (full).
    /// The spot's live upload sessions hold places too (see `startUpload(_:now:)`), except
    /// `object.uploadSession`, which must exist (else `.notFound`) and is removed in the
    /// same transaction, recorded as a `FinishedUpload` of the committed object (its owner,
    /// path, generation and size, finished at the commit's time). A spot without a row
    /// counts only its sessions.
    /// With `object.lease`, the lease must still be held (else `.unavailable`: gc may have
    /// removed the blobs) and is released. Damage marks of the object's blob and thumbnails
    /// are cleared (the blobs were just stored whole). A replaced object's download tokens
    /// are revoked, then `object.downloadTokenDigest` is recorded. The object's metageneration is 1.
    /// Photo metadata and thumbnails are recorded per blob digest.
    func commit(_ object: NewObject, admission: SpotAdmission) async throws -> StoredObject

    /// Replaces the content type and settings of the object at `path`, adds one to its
    /// metageneration and sets its update time; its bytes, generation and download tokens
    /// stay. `nil` when there is no object at `path`.
    /// - Throws: `.conflict` when the object's generation is no longer `generation` (it was
    ///   replaced after the caller read it and decided on it).
    func updateMetadata(of path: ObjectPath, generation: Int64, contentType: String, settings: ObjectSettings) async throws -> StoredObject?

    /// Removes the object at `path` and returns it, or `nil` when absent. Its blob stays
    /// for garbage collection; its download tokens go with it; the spot's derived location
    /// is brought up to date.
    func removeObject(at path: ObjectPath) async throws -> StoredObject?

    /// One page of objects. `pageToken` is opaque; a bad one throws `SpotError(.badRequest)`.
    /// Paging is stable: concatenated pages list every entry present throughout, once, in order.
    func list(_ query: ListQuery) async throws -> Listing

    /// The spot with its overrides, derived location and objects, or `nil` when it has
    /// no spot row (no object was ever committed to it under a spot limit).
    func spotDetails(bucket: String, id: String) async throws -> SpotDetails?

    /// Applies the owner's `changes` to an existing spot and returns it.
    /// - Throws: `SpotError(.notFound)` when the spot does not exist.
    func updateSpot(bucket: String, id: String, changes: SpotChanges) async throws -> SpotDetails

    /// Spots matching `query`: by city in id order, or near a point by distance then id.
    /// Spots without a location, or whose owner hid it, never match `near`. A bad page token throws `.badRequest`.
    func findSpots(_ query: SpotQuery) async throws -> SpotPage

    /// Records a download token (its SHA-256 `digest`) for the object at `path`; `nil`
    /// when there is no object there.
    func addDownloadToken(_ digest: Digest, to path: ObjectPath) async throws -> DownloadToken?

    /// The live download tokens of the object at `path`, oldest first; `nil` when there is no object.
    func downloadTokens(of path: ObjectPath) async throws -> [DownloadToken]?

    /// Revokes the download token `id` of the object at `path`; `false` when there is no such token.
    func revokeDownloadToken(_ id: String, of path: ObjectPath) async throws -> Bool

    /// Replaces the download tokens of every object `uid` owns, in one transaction: the
    /// user's `downloadTokenEpoch` goes up by one, and each object loses all its tokens and
    /// gets the one whose digest `token(path, generation, epoch)` gives for the new epoch.
    /// Returns how many objects got one; `nil` when there is no such user.
    func replaceDownloadTokens(ownedBy uid: String, with token: @escaping @Sendable (ObjectPath, Int64, Int) -> Digest) async throws -> Int?

    /// The object at `path` if a live download token of it has this digest (compared in
    /// constant time), else `nil`.
    func object(at path: ObjectPath, downloadTokenDigest: Digest) async throws -> StoredObject?

    /// The blob holding the same image as `digest` with its GPS removed, if made before.
    func locationFreeDigest(of digest: Digest) async throws -> Digest?

    /// Records that blob `free` is `digest` without GPS (the blob is already stored under
    /// `lease`, which this releases).
    func setLocationFreeDigest(_ free: Digest, of digest: Digest, lease: LeaseID) async throws

    // MARK: Upload sessions (resumable uploads)

    /// Records `session` (with no chunks). When its path is in a spot (`topFolder`), the
    /// spot decides admission in the same transaction as for `commit`:
    /// `session.admission.refusal(of:into:isReplacement:)` refuses with `.forbidden` or
    /// `.conflict` (a spot without a row is owned by nobody yet; a path holding an object is
    /// a replacement and never full). Sessions hold places: each name in the spot that some
    /// live session (expiring after `now`) is uploading and no object has counts once. The
    /// session holds its place until it is committed, removed or expires.
    ///
    /// In the same transaction, `session.owner`'s live sessions (expiring after `now`) are
    /// counted across every server on the catalog: with `openLimit` or more, it is refused
    /// with `.rateLimited`.
    func startUpload(_ session: UploadSession, now: Date, openLimit: Int) async throws

    /// The session `id` with its chunks, or `nil` when there is none (never started,
    /// completed, cancelled or swept).
    func uploadSession(_ id: String) async throws -> UploadSession?

    /// Appends `chunk` to session `id` and sets its expiry, releasing `lease` (taken before
    /// the chunk's blob was stored; `nil` when the chunk is not a blob), and returns the session.
    /// - Throws: `.notFound` when there is no such session or it expired before `now`;
    ///   `.conflict` when `chunk.offset` is not the session's `received` (another request got
    ///   there first); `.tooLarge` when the chunk ends past `declaredSize`; `.unavailable`
    ///   when the lease is gone.
    func appendChunk(_ chunk: UploadChunk, to id: String, lease: LeaseID?, now: Date, expiresAt: Date) async throws -> UploadSession

    /// Sets the declared size of session `id` once the client tells it; `nil` when there is
    /// no such session. - Throws: `.conflict` when a different size was declared, or fewer
    /// bytes than already received.
    func declareSize(_ size: Int64, of id: String) async throws -> UploadSession?

    /// Removes session `id` with its chunks' rows (their blobs are left for gc) and returns
    /// it, or `nil` when there was none. With `expiredBefore`, only a session that expired
    /// before then is removed (a sweep must not remove a session a chunk just extended).
    func endUpload(_ id: String, expiredBefore: Date?) async throws -> UploadSession?

    /// The upload session `id` that a commit completed (`NewObject.uploadSession`), or `nil`:
    /// kept until `forgetFinishedUploads(finishedBefore:)`, so that a client whose last
    /// answer was lost learns that the upload is complete.
    func finishedUpload(_ id: String) async throws -> FinishedUpload?

    /// Forgets the finished uploads committed before `cutoff`; returns how many.
    func forgetFinishedUploads(finishedBefore cutoff: Date) async throws -> Int

    /// Up to `limit` sessions that expired before `now`, earliest first: for the sweeper.
    func expiredUploads(before now: Date, limit: Int) async throws -> [UploadSession]

    // MARK: Leases (blobs stored before the catalog names them)

    /// Records a lease on `digests` from `now` for `duration` seconds: gc keeps those blobs
    /// until it expires, though nothing names them yet. Take it before storing the blobs;
    /// the commit that names them releases it. `nil` while gc is removing one of them
    /// (claimed less than `claimLifetime` before `now`): retry shortly.
    func lease(_ digests: [Digest], at now: Date, for duration: TimeInterval) async throws -> LeaseID?

    /// Gives a lease up (the upload failed); an unknown or released lease is not an error.
    func releaseLease(_ id: LeaseID) async throws

    /// In one transaction: drops leases that expired before `cutoff`, then claims `digest`
    /// for removal if no object, thumbnail, GPS-free copy or upload chunk names it and no lease holds it.
    /// While claimed (until `endRemoval`, or for `claimLifetime` when gc dies), `lease` of
    /// that digest answers `nil`. Returns whether it was claimed.
    func claimForRemoval(_ digest: Digest, cutoff: Date, now: Date) async throws -> Bool

    /// Ends the removal claim on `digest` (the blob is gone, or its removal failed).
    func endRemoval(_ digest: Digest) async throws

    // MARK: Shared configuration

    /// The key every instance signs URLs with: the one stored in the catalog, or `candidate`
    /// when none is (stored then; the first process to store one wins).
    func signingKey(orStore candidate: [UInt8]) async throws -> [UInt8]

    /// For each of `digests` that `owner` already stores in `bucket`, the names holding it
    /// (in name order); digests without such an object are absent.
    func names(ofDigests digests: [Digest], ownedBy owner: String, in bucket: String) async throws -> [Digest: [String]]

    // MARK: Integrity (fsck, gc, stats)

    /// Every blob the catalog refers to (objects, thumbnails of every recorded blob, GPS-free
    /// copies) and the blobs marked damaged, read in one transaction.
    func blobReferences() async throws -> BlobReferences

    /// Problems in the catalog's own references: objects in a spot without a spot row, spots
    /// whose derived location disagrees with their objects' photos, download tokens of no
    /// object. Empty when all is well.
    func referenceIssues() async throws -> [CatalogIssue]

    /// Fixes the repairable `referenceIssues()` (re-derives spot locations, drops download
    /// tokens of no object) and returns how many were fixed.
    func repairIssues() async throws -> Int

    /// Marks blob `digest` damaged with why (`"failed its checksum"`, `"is missing"`): reads
    /// of objects and thumbnails using it then fail with that reason. Marking again replaces the reason.
    func markDamaged(_ digest: Digest, reason: String) async throws

    /// Why blob `digest` is marked damaged, or `nil` when it is not.
    func damage(of digest: Digest) async throws -> String?

    /// Removes the damage mark of `digest` (the blob was restored); `false` when it had none.
    @discardableResult
    func clearDamage(of digest: Digest) async throws -> Bool

    /// Objects, logical and unique bytes, thumbnails, and per-bucket counts.
    func statistics() async throws -> CatalogStatistics

    // MARK: Health

    /// Returns when the catalog answers a trivial query now (`/healthz?deep=1`); cheap, and
    /// as quick to fail as the backend allows.
    /// - Throws: `SpotError(.unavailable)` saying what is wrong (no server, no connection).
    func checkHealth() async throws
}

/// An object with what deciding on a read of it needs: `Catalog.objectForReading(at:)`.
public struct ObjectReading: Sendable {
    /// The object, or `nil` when absent.
    public var object: StoredObject?
    /// The spot of the object's path (its top folder), or `nil`.
    public var spot: SpotState?
    /// Why blobs of the object (its bytes, its thumbnails) are marked damaged, by digest;
    /// empty when none is.
    public var damage: [Digest: String]

    public init(object: StoredObject?, spot: SpotState?, damage: [Digest: String] = [:]) {
        self.object = object
        self.spot = spot
        self.damage = damage
    }
}

/// A lease on blobs, from `Catalog.lease(_:at:for:)`.
public struct LeaseID: Sendable, Hashable {
    public let rawValue: Int64
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
}

/// How long (seconds) a removal claim of a gc that died keeps uploads of that digest waiting.
public let claimLifetime: Double = 60

/// The change-notification port: tells a process that any process may have committed to
/// the catalog, so that whatever it keeps from the catalog (memoized reads, kept answers,
/// users and claims) is dropped. Every cache listens here and nowhere else.
public protocol CatalogChangeFeed: Sendable {
    /// A number that changes after every commit by any connection or process (at most
    /// `stalenessBound` after it) and never comes back, so an answer worked out after
    /// reading it holds while it stays the same; `nil` when the feed cannot tell (keep nothing).
    func stamp() throws -> Int64?

    /// How long after another process's commit `stamp()` may still give the old number:
    /// zero for SQLite (the WAL index is shared memory).
    var stalenessBound: Duration { get }
}

extension Catalog {
    /// Records `session` with no limit on its owner's open sessions (see `startUpload(_:now:openLimit:)`).
    public func startUpload(_ session: UploadSession, now: Date) async throws {
        try await startUpload(session, now: now, openLimit: .max)
    }

    /// All users, by uid.
    public func users() async throws -> [User] { try await users(after: nil, limit: nil) }
}

import Foundation

/// Objects and the spots they are in: what each object holds (digest, size, type, owner,
/// Firebase fields, photo metadata and thumbnails per blob), and each spot's owner,
/// overrides and derived location. `commit` is the final arbiter of a spot's limits: it
/// re-checks them in the same transaction that writes, so they hold across processes and
/// machines. "Absent" is `nil`, never an error.
public protocol ObjectCatalog: Sendable {
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
    /// are revoked, then `object.downloadTokenDigest` is recorded, while the owner's
    /// download-token epoch is still `object.downloadTokenEpoch` (else `.unavailable`: a
    /// revocation replaced the owner's tokens meanwhile; the owner's row is held against
    /// another until the commit ends). The object's metageneration is 1.
    /// Photo metadata and thumbnails are recorded per blob digest. `object.smallBlob` is
    /// stored as blob `object.digest` in the same transaction (`CatalogKeptBlobs`), unless gc
    /// is removing a blob of that digest (`.unavailable`).
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

    /// For each of `digests` that `owner` already stores in `bucket`, the names holding it
    /// (in name order); digests without such an object are absent.
    func names(ofDigests digests: [Digest], ownedBy owner: String, in bucket: String) async throws -> [Digest: [String]]
}

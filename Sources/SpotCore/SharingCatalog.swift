import Foundation

/// What lets others read an object: its download tokens (kept as digests, gone with their
/// object) and the key every instance signs URLs with.
public protocol SharingCatalog: Sendable {
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

    /// The key every instance signs URLs with: the one stored in the catalog, or `candidate`
    /// when none is (stored then; the first process to store one wins).
    func signingKey(orStore candidate: [UInt8]) async throws -> [UInt8]
}

import Foundation

/// What `fsck`, `gc` and `stats` read and repair: every blob the catalog refers to, damage
/// marks of blobs, problems in the catalog's own references, and statistics.
public protocol IntegrityCatalog: Sendable {
    /// Every blob of `prefix` that the catalog refers to (objects, thumbnails of every
    /// recorded blob, GPS-free copies, upload chunks, leases) and those marked damaged, read
    /// in one transaction.
    func blobReferences(withPrefix prefix: DigestPrefix) async throws -> BlobReferences

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
}

import Foundation

/// Which stored blobs are spoken for before the catalog names them (leases), which are
/// being removed by gc (removal claims), and the GPS-free copy of an image's blob. A lease
/// and a removal claim of one digest never overlap, so gc never removes a blob an upload
/// is about to name.
public protocol BlobLedger: Sendable {
    /// The blob holding the same image as `digest` with its GPS removed, if made before.
    func locationFreeDigest(of digest: Digest) async throws -> Digest?

    /// Records that blob `free` is `digest` without GPS (the blob is already stored under
    /// `lease`, which this releases).
    func setLocationFreeDigest(_ free: Digest, of digest: Digest, lease: LeaseID) async throws

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
}

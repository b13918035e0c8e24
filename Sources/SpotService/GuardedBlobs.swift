import Foundation
import SpotCore

/// The blob store behind the catalog's guards, so that gc never removes bytes an upload is
/// about to name: bytes are stored under a lease (`Catalog.lease`), and removed only once
/// the catalog lets gc claim them (`Catalog.claimForRemoval`).
struct GuardedBlobs: Sendable {
    let catalog: any Catalog
    let blobs: any BlobStore
    /// How long a lease keeps blobs from gc (seconds).
    let leaseDuration: TimeInterval
    let now: @Sendable () -> Date

    /// Runs `store` under a new lease on `digests` and returns what it returns: the lease is
    /// the caller's then (the catalog write that names the blobs releases it); when `store`
    /// throws, it is released.
    /// - Throws: `.unavailable` when gc's removal of one of `digests` outlasts the wait (at
    ///   most `claimLifetime`); what `store` throws.
    func leasing<Result>(_ digests: [SpotCore.Digest], _ store: (LeaseID) async throws -> Result) async throws -> Result {
        let lease = try await lease(digests)
        do {
            return try await store(lease)
        } catch {
            try? await catalog.releaseLease(lease)
            throw error
        }
    }

    /// A lease on `digests`, waiting while gc removes one of them (at most `claimLifetime`).
    private func lease(_ digests: [SpotCore.Digest]) async throws -> LeaseID {
        for _ in 0..<Int(claimLifetime * 20) {
            if let lease = try await catalog.lease(digests, at: now(), for: leaseDuration) { return lease }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw SpotError(.unavailable, "gc is removing a blob this upload needs; send it again")
    }

    /// Removes blob `digest` when the catalog lets gc claim it (nothing names it and no lease
    /// that expired after `cutoff` holds it); returns whether it was removed.
    func removeIfUnreferenced(_ digest: SpotCore.Digest, cutoff: Date, now: Date) async throws -> Bool {
        guard try await catalog.claimForRemoval(digest, cutoff: cutoff, now: now) else { return false }
        do {
            try await blobs.remove(digest)
        } catch {
            try? await catalog.endRemoval(digest)
            throw error
        }
        try await catalog.endRemoval(digest)
        return true
    }
}

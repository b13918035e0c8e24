import Foundation
import SpotCore

extension SQLCatalog {
    /// Lease and claim of a digest take its lock, so they never overlap.
    public func lease(_ digests: [Digest], at now: Date, for duration: TimeInterval) async throws -> LeaseID? {
        let hexes = Array(Set(digests.map(\.hex))).sorted()
        return try await write { transaction in
            guard try await !Self.lockBlobsSeeingRemoval(hexes, at: now, transaction) else { return nil }
            guard let id = try await transaction.value(
                "INSERT INTO leases (expires_at) VALUES (\(now.addingTimeInterval(duration))) RETURNING id", as: Int64.self)
            else { throw SpotError(.internal, "the catalog recorded a lease without an id") }
            let rows = hexes.map { hex -> CatalogSQL in "(\(id), \(hex))" }
            if !rows.isEmpty { try await transaction.run("INSERT INTO leased_blobs (lease_id, digest) VALUES " + CatalogSQL.joined(rows, separator: ", ")) }
            return LeaseID(id)
        }
    }

    /// Takes the locks of the digests `hexes` and returns whether gc is removing one of them
    /// (its claim younger than `claimLifetime` at `now`): what a lease, or a commit that
    /// stores the bytes itself, must wait for.
    static func lockBlobsSeeingRemoval(_ hexes: [String], at now: Date, _ transaction: any CatalogTransaction) async throws -> Bool {
        try await transaction.lock(hexes)
        return try await transaction.row("""
            SELECT 1 FROM blob_removals WHERE claimed_at > \(now.addingTimeInterval(-claimLifetime)) AND digest \(oneOf: hexes)
            """) != nil
    }

    public func releaseLease(_ id: LeaseID) async throws {
        try await write { transaction in try await transaction.run("DELETE FROM leases WHERE id = \(id.rawValue)") }
    }

    /// Holds the digest's lock.
    public func claimForRemoval(_ digest: Digest, cutoff: Date, now: Date) async throws -> Bool {
        let hex = digest.hex
        return try await write { transaction in
            try await transaction.lock([hex])
            try await transaction.run("DELETE FROM leases WHERE expires_at < \(cutoff)")
            let named = try await transaction.value("""
                SELECT EXISTS (SELECT 1 FROM objects WHERE digest = \(hex)) OR EXISTS (SELECT 1 FROM thumbnails WHERE thumb_digest = \(hex))
                    OR EXISTS (SELECT 1 FROM location_free_blobs WHERE free_digest = \(hex)) OR EXISTS (SELECT 1 FROM leased_blobs WHERE digest = \(hex))
                    OR EXISTS (SELECT 1 FROM upload_chunks WHERE digest = \(hex))
                """, as: Bool.self) ?? true
            guard !named else { return false }
            try await transaction.run("""
                INSERT INTO blob_removals (digest, claimed_at) VALUES (\(hex), \(now))
                ON CONFLICT (digest) DO UPDATE SET claimed_at = excluded.claimed_at
                """)
            return true
        }
    }

    public func endRemoval(_ digest: Digest) async throws {
        try await write { transaction in try await transaction.run("DELETE FROM blob_removals WHERE digest = \(digest.hex)") }
    }

    public func signingKey(orStore candidate: [UInt8]) async throws -> [UInt8] {
        try await write { transaction in
            try await transaction.run("INSERT INTO settings (name, value) VALUES ('signingKey', \(candidate)) ON CONFLICT (name) DO NOTHING")
            guard let key = try await transaction.value("SELECT value FROM settings WHERE name = 'signingKey'", as: [UInt8].self) else {
                throw SpotError(.internal, "the catalog lost its signing key while storing it")
            }
            return key
        }
    }

    /// Throws `.unavailable` unless lease `id` is still held, then releases it: a lease gc
    /// dropped (it expired) may no longer protect its blobs.
    static func release(heldLease id: LeaseID, _ transaction: any CatalogTransaction) async throws {
        guard try await transaction.row("DELETE FROM leases WHERE id = \(id.rawValue) RETURNING id") != nil else {
            throw SpotError(.unavailable, "the upload took longer than its lease on the stored bytes, so gc may have removed them; send it again")
        }
    }
}

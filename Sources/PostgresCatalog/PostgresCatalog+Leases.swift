import Foundation
import PostgresNIO
import SpotCore

extension PostgresCatalog {
    /// Records a lease on `digests` (see `Catalog.lease`), or `nil` while gc claims one of
    /// them. Lease and claim of a digest take its advisory lock, so they never overlap.
    public func lease(_ digests: [Digest], at now: Date, for duration: TimeInterval) async throws -> LeaseID? {
        let hexes = Array(Set(digests.map(\.hex))).sorted()
        return try await write { connection in
            try await Self.lockDigests(hexes, connection, logger: self.logger)
            let claimed = try await connection.query("""
                SELECT 1 FROM blob_removals WHERE claimed_at > \(now.addingTimeInterval(-claimLifetime)) AND digest = ANY(\(hexes))
                """, logger: self.logger).collect()
            guard claimed.isEmpty else { return nil }
            let id = try await connection.query(
                "INSERT INTO leases (expires_at) VALUES (\(now.addingTimeInterval(duration))) RETURNING id", logger: self.logger
            ).collect().first?.decode(Int64.self, at: 0)
            guard let id else { throw SpotError(.internal, "the catalog recorded a lease without an id") }
            try await connection.query(
                "INSERT INTO leased_blobs (lease_id, digest) SELECT \(id), unnest(\(hexes)::text[])", logger: self.logger)
            return LeaseID(id)
        }
    }

    /// Gives a lease up; an unknown or released lease is not an error.
    public func releaseLease(_ id: LeaseID) async throws {
        try await write { connection in
            _ = try await connection.query("DELETE FROM leases WHERE id = \(id.rawValue)", logger: self.logger)
        }
    }

    /// Drops leases that expired before `cutoff`, then claims `digest` for removal if nothing
    /// (object, thumbnail, GPS-free copy, upload chunk) names it and no lease holds it, in
    /// one transaction holding the digest's advisory lock.
    public func claimForRemoval(_ digest: Digest, cutoff: Date, now: Date) async throws -> Bool {
        let hex = digest.hex
        return try await write { connection in
            try await Self.lockDigests([hex], connection, logger: self.logger)
            try await connection.query("DELETE FROM leases WHERE expires_at < \(cutoff)", logger: self.logger)
            let named = try await connection.query("""
                SELECT EXISTS (SELECT 1 FROM objects WHERE digest = \(hex)) OR EXISTS (SELECT 1 FROM thumbnails WHERE thumb_digest = \(hex))
                    OR EXISTS (SELECT 1 FROM location_free_blobs WHERE free_digest = \(hex)) OR EXISTS (SELECT 1 FROM leased_blobs WHERE digest = \(hex))
                    OR EXISTS (SELECT 1 FROM upload_chunks WHERE digest = \(hex))
                """, logger: self.logger).collect().first?.decode(Bool.self, at: 0) ?? true
            guard !named else { return false }
            try await connection.query("""
                INSERT INTO blob_removals (digest, claimed_at) VALUES (\(hex), \(now))
                ON CONFLICT (digest) DO UPDATE SET claimed_at = EXCLUDED.claimed_at
                """, logger: self.logger)
            return true
        }
    }

    /// Ends the removal claim on `digest`.
    public func endRemoval(_ digest: Digest) async throws {
        try await write { connection in
            _ = try await connection.query("DELETE FROM blob_removals WHERE digest = \(digest.hex)", logger: self.logger)
        }
    }

    /// The key every instance signs URLs with: the stored one, or `candidate` stored now
    /// (the first process to store one wins).
    public func signingKey(orStore candidate: [UInt8]) async throws -> [UInt8] {
        try await write { connection in
            try await connection.query("""
                INSERT INTO settings (name, value) VALUES ('signingKey', \(Data(candidate))) ON CONFLICT (name) DO NOTHING
                """, logger: self.logger)
            guard let key = try await connection.query("SELECT value FROM settings WHERE name = 'signingKey'", logger: self.logger)
                .collect().first?.decode(Data.self, at: 0)
            else { throw SpotError(.internal, "the catalog lost its signing key while storing it") }
            return [UInt8](key)
        }
    }

    /// Throws `.unavailable` unless lease `id` is still held, then releases it: a lease gc
    /// dropped (it expired) may no longer protect its blobs.
    static func release(heldLease id: LeaseID, _ connection: PostgresConnection, logger: Logger) async throws {
        let released = try await connection.query("DELETE FROM leases WHERE id = \(id.rawValue) RETURNING id", logger: logger).collect()
        guard !released.isEmpty else {
            throw SpotError(.unavailable, "the upload took longer than its lease on the stored bytes, so gc may have removed them; send it again")
        }
    }

    /// Takes the transaction's advisory lock of each of `hexes` (sorted, so that two
    /// transactions never wait for each other in a cycle).
    private static func lockDigests(_ hexes: [String], _ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            SELECT pg_advisory_xact_lock(hashtextextended(digest, 0)) FROM unnest(\(hexes)::text[]) AS digest ORDER BY digest
            """, logger: logger)
    }
}

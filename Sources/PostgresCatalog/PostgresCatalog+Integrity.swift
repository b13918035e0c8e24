import CatalogPlanning
import Foundation
import PostgresNIO
import SpotCore

extension PostgresCatalog {
    /// Every blob the catalog refers to, with the leases and damage marks, from one snapshot.
    public func blobReferences() async throws -> BlobReferences {
        try await read { connection in
            let logger = self.logger
            var references = BlobReferences()
            for row in try await connection.query("SELECT bucket, name, digest, size FROM objects ORDER BY bucket, name", logger: logger).collect() {
                let (bucket, name, digest, size) = try row.decode((String, String, String, Int64).self)
                let path = "\(bucket)/\(name)"
                references.objects.append(.init(path: path, digest: try Self.digest(digest, of: "object \(path)"), size: size))
            }
            for row in try await connection.query(
                "SELECT digest, size, thumb_digest, byte_count FROM thumbnails ORDER BY digest, size, content_type", logger: logger
            ).collect() {
                let (hex, edge, thumbnail, byteCount) = try row.decode((String, Int, String, Int64).self)
                let original = try Self.digest(hex, of: "a thumbnail")
                references.thumbnails.append(.init(
                    original: original, edge: edge, digest: try Self.digest(thumbnail, of: "thumbnail of \(original)"), byteCount: byteCount))
            }
            for row in try await connection.query("SELECT digest, free_digest FROM location_free_blobs ORDER BY digest", logger: logger).collect() {
                let (hex, free) = try row.decode((String, String).self)
                let original = try Self.digest(hex, of: "a GPS-free copy")
                references.locationFree.append(.init(original: original, digest: try Self.digest(free, of: "GPS-free copy of \(original)")))
            }
            for row in try await connection.query("""
                SELECT digest, MAX(expires_at) FROM leased_blobs JOIN leases ON leases.id = leased_blobs.lease_id GROUP BY digest
                """, logger: logger).collect() {
                let (hex, expiresAt) = try row.decode((String, Date).self)
                references.leases[try Self.digest(hex, of: "a lease")] = expiresAt
            }
            for row in try await connection.query("SELECT DISTINCT digest FROM upload_chunks WHERE digest IS NOT NULL", logger: logger).collect() {
                references.uploadChunks.insert(try Self.digest(try row.decode(String.self, at: 0), of: "an upload chunk"))
            }
            for row in try await connection.query("SELECT digest, reason FROM damaged_blobs", logger: logger).collect() {
                let (hex, reason) = try row.decode((String, String).self)
                references.damaged[try Self.digest(hex, of: "a damaged blob")] = reason
            }
            return references
        }
    }

    /// Problems in the catalog's own references (see `Catalog.referenceIssues`), from one snapshot.
    public func referenceIssues() async throws -> [CatalogIssue] {
        try await read { connection in try await Self.issues(connection, logger: self.logger).map(\.issue) }
    }

    /// Fixes the repairable reference issues in one transaction and returns how many were fixed.
    public func repairIssues() async throws -> Int {
        try await write { connection in
            var fixed = 0
            for (issue, repair) in try await Self.issues(connection, logger: self.logger) where issue.repairable {
                try await repair?(connection)
                fixed += 1
            }
            return fixed
        }
    }

    /// Marks blob `digest` damaged with why; marking again replaces the reason.
    public func markDamaged(_ digest: Digest, reason: String) async throws {
        try await write { connection in
            _ = try await connection.query("""
                INSERT INTO damaged_blobs (digest, reason, marked_at) VALUES (\(digest.hex), \(reason), \(Date()))
                ON CONFLICT (digest) DO UPDATE SET reason = EXCLUDED.reason, marked_at = EXCLUDED.marked_at
                """, logger: self.logger)
        }
    }

    /// Why blob `digest` is marked damaged, or `nil`.
    public func damage(of digest: Digest) async throws -> String? {
        try await query("SELECT reason FROM damaged_blobs WHERE digest = \(digest.hex)").first?.decode(String.self, at: 0)
    }

    /// Removes the damage mark of `digest`; `false` when it had none.
    @discardableResult
    public func clearDamage(of digest: Digest) async throws -> Bool {
        try await write { connection in
            try await !connection.query("DELETE FROM damaged_blobs WHERE digest = \(digest.hex) RETURNING digest", logger: self.logger)
                .collect().isEmpty
        }
    }

    /// Objects, logical and unique bytes, thumbnails, and per-bucket counts, from one snapshot.
    public func statistics() async throws -> CatalogStatistics {
        try await read { connection in
            let logger = self.logger
            // One size per digest: every object of a digest holds the same bytes.
            let totals = try await connection.query("""
                SELECT (SELECT COUNT(*) FROM objects), (SELECT COALESCE(SUM(size), 0)::bigint FROM objects),
                       COUNT(*), COALESCE(SUM(size), 0)::bigint,
                       (SELECT COUNT(*) FROM objects WHERE NOT EXISTS (SELECT 1 FROM users WHERE users.uid = objects.owner))
                FROM (SELECT digest, MAX(size) AS size FROM objects GROUP BY digest) unique_originals
                """, logger: logger).collect()
            let thumbnails = try await connection.query("""
                SELECT COUNT(*), COALESCE(SUM(byte_count), 0)::bigint
                FROM (SELECT thumb_digest, MAX(byte_count) AS byte_count FROM thumbnails GROUP BY thumb_digest) unique_thumbnails
                """, logger: logger).collect()
            let buckets = try await connection.query(
                "SELECT bucket, COUNT(*), SUM(size)::bigint FROM objects GROUP BY bucket ORDER BY bucket", logger: logger
            ).collect().map { row in
                let (name, objects, bytes) = try row.decode((String, Int, Int64).self)
                return CatalogStatistics.Bucket(name: name, objects: objects, bytes: bytes)
            }
            guard let objects = try totals.first?.decode((Int, Int64, Int, Int64, Int).self),
                  let thumbnails = try thumbnails.first?.decode((Int, Int64).self)
            else { throw SpotError(.internal, "the catalog's statistics came back empty") }
            return CatalogStatistics(
                objects: objects.0, logicalBytes: objects.1, uniqueOriginals: objects.2, uniqueOriginalBytes: objects.3,
                thumbnails: thumbnails.0, thumbnailBytes: thumbnails.1, buckets: buckets, objectsOfDeletedUsers: objects.4)
        }
    }

    /// The digest stored as `hex`, or an error naming the row.
    private static func digest(_ hex: String, of what: String) throws -> Digest {
        guard let digest = Digest(hex: hex) else {
            throw SpotError(.internal, "the catalog holds an invalid digest '\(hex)' for \(what); restore the database from a backup")
        }
        return digest
    }

    /// A repair of one reference issue, run in the repairing transaction.
    private typealias Repair = @Sendable (PostgresConnection) async throws -> Void

    /// The reference issues, each with its repair when it has one; the same as the SQLite catalog's.
    private static func issues(_ connection: PostgresConnection, logger: Logger) async throws -> [(issue: CatalogIssue, repair: Repair?)] {
        var issues: [(issue: CatalogIssue, repair: Repair?)] = []
        // Objects in a spot that has no spot row: its owner (who may add to it) is unknown.
        for row in try await connection.query("""
            SELECT DISTINCT o.bucket, o.spot_id FROM objects o
            WHERE o.spot_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM spots s WHERE s.bucket = o.bucket AND s.id = o.spot_id)
            ORDER BY o.bucket, o.spot_id
            """, logger: logger).collect() {
            let (bucket, id) = try row.decode((String, String).self)
            issues.append((.spotWithoutRow(bucket: bucket, id: id), { connection in
                    try await connection.query("""
                        INSERT INTO spots (bucket, id, owner, created_at)
                        SELECT bucket, spot_id, owner, created_at FROM objects WHERE bucket = \(bucket) AND spot_id = \(id)
                        ORDER BY created_at, id LIMIT 1
                        """, logger: logger)
                    try await refreshLocation(of: SpotKey(bucket: bucket, id: id), connection, logger: logger)
                }))
        }
        // Spots whose derived location is not what their objects' photos give.
        for row in try await connection.query("SELECT \(unescaped: spotColumns) FROM spots ORDER BY bucket, id", logger: logger).collect() {
            let spot = try spotRecord(row)
            let key = SpotKey(bucket: spot.bucket, id: spot.id)
            var derived = spot
            derived.setLocation(try await derivedLocation(of: key, connection, logger: logger))
            guard derived != spot else { continue }
            issues.append((.staleLocation(of: spot, derived: derived), { connection in try await refreshLocation(of: key, connection, logger: logger) }))
        }
        // Download tokens of no object (foreign keys normally prevent these).
        let orphanTokens = try await connection.query("""
            SELECT COUNT(*) FROM download_tokens WHERE object_id NOT IN (SELECT id FROM objects)
            """, logger: logger).collect().first?.decode(Int.self, at: 0) ?? 0
        if orphanTokens > 0 {
            issues.append((.orphanDownloadTokens(orphanTokens), { connection in
                    try await connection.query("DELETE FROM download_tokens WHERE object_id NOT IN (SELECT id FROM objects)", logger: logger)
                }))
        }
        return issues
    }
}

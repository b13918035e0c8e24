import Foundation
import SpotCore

extension SQLCatalog {
    /// Every blob the catalog refers to, with the leases and damage marks, from one snapshot.
    public func blobReferences() async throws -> BlobReferences {
        try await read { transaction in
            var references = BlobReferences()
            for row in try await transaction.rows("SELECT bucket, name, digest, size FROM objects ORDER BY bucket, name") {
                let path = "\(try row(0) as String)/\(try row(1) as String)"
                references.objects.append(.init(path: path, digest: try Self.digest(row(2), of: "object \(path)"), size: try row(3)))
            }
            for row in try await transaction.rows("SELECT digest, size, thumb_digest, byte_count FROM thumbnails ORDER BY digest, size, content_type") {
                let original = try Self.digest(row(0), of: "a thumbnail")
                references.thumbnails.append(.init(
                    original: original, edge: try row(1), digest: try Self.digest(row(2), of: "thumbnail of \(original)"), byteCount: try row(3)))
            }
            for row in try await transaction.rows("SELECT digest, free_digest FROM location_free_blobs ORDER BY digest") {
                let original = try Self.digest(row(0), of: "a GPS-free copy")
                references.locationFree.append(.init(original: original, digest: try Self.digest(row(1), of: "GPS-free copy of \(original)")))
            }
            for row in try await transaction.rows("""
                SELECT digest, MAX(expires_at) FROM leased_blobs JOIN leases ON leases.id = leased_blobs.lease_id GROUP BY digest
                """) {
                references.leases[try Self.digest(row(0), of: "a lease")] = try row(1) as Date
            }
            for row in try await transaction.rows("SELECT DISTINCT digest FROM upload_chunks WHERE digest IS NOT NULL") {
                references.uploadChunks.insert(try Self.digest(row(0), of: "an upload chunk"))
            }
            for row in try await transaction.rows("SELECT digest, reason FROM damaged_blobs") {
                references.damaged[try Self.digest(row(0), of: "a damaged blob")] = try row(1) as String
            }
            return references
        }
    }

    /// Problems in the catalog's own references (see `Catalog.referenceIssues`), from one snapshot.
    public func referenceIssues() async throws -> [CatalogIssue] {
        try await read { transaction in try await Self.issues(transaction).map(\.issue) }
    }

    /// Fixes the repairable reference issues in one transaction and returns how many were fixed.
    public func repairIssues() async throws -> Int {
        try await write { transaction in
            var fixed = 0
            for (issue, repair) in try await Self.issues(transaction) where issue.repairable {
                try await repair?(transaction)
                fixed += 1
            }
            return fixed
        }
    }

    /// Marks blob `digest` damaged with why; marking again replaces the reason.
    public func markDamaged(_ digest: Digest, reason: String) async throws {
        let now = clock()
        try await write { transaction in
            try await transaction.run("""
                INSERT INTO damaged_blobs (digest, reason, marked_at) VALUES (\(digest.hex), \(reason), \(now))
                ON CONFLICT (digest) DO UPDATE SET reason = excluded.reason, marked_at = excluded.marked_at
                """)
        }
    }

    /// Why blob `digest` is marked damaged, or `nil`.
    public func damage(of digest: Digest) async throws -> String? {
        try await database.query("SELECT reason FROM damaged_blobs WHERE digest = \(digest.hex)").first.map { try $0(0) }
    }

    /// Removes the damage mark of `digest`; `false` when it had none.
    @discardableResult
    public func clearDamage(of digest: Digest) async throws -> Bool {
        try await write { transaction in
            try await transaction.row("DELETE FROM damaged_blobs WHERE digest = \(digest.hex) RETURNING digest") != nil
        }
    }

    /// Objects, logical and unique bytes, thumbnails, and per-bucket counts, from one snapshot.
    public func statistics() async throws -> CatalogStatistics {
        try await read { transaction in
            // One size per digest: every object of a digest holds the same bytes.
            let objects = try await transaction.row("""
                SELECT (SELECT COUNT(*) FROM objects), (SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM objects),
                       COUNT(*), CAST(COALESCE(SUM(size), 0) AS BIGINT),
                       (SELECT COUNT(*) FROM objects WHERE NOT EXISTS (SELECT 1 FROM users WHERE users.uid = objects.owner))
                FROM (SELECT digest, MAX(size) AS size FROM objects GROUP BY digest) unique_originals
                """)
            let thumbnails = try await transaction.row("""
                SELECT COUNT(*), CAST(COALESCE(SUM(byte_count), 0) AS BIGINT)
                FROM (SELECT thumb_digest, MAX(byte_count) AS byte_count FROM thumbnails GROUP BY thumb_digest) unique_thumbnails
                """)
            let buckets = try await transaction.rows(
                "SELECT bucket, COUNT(*), CAST(SUM(size) AS BIGINT) FROM objects GROUP BY bucket ORDER BY bucket"
            ).map { row in CatalogStatistics.Bucket(name: try row(0), objects: try row(1), bytes: try row(2)) }
            guard let objects, let thumbnails else { throw SpotError(.internal, "the catalog's statistics came back empty") }
            return CatalogStatistics(
                objects: try objects(0), logicalBytes: try objects(1), uniqueOriginals: try objects(2), uniqueOriginalBytes: try objects(3),
                thumbnails: try thumbnails(0), thumbnailBytes: try thumbnails(1), buckets: buckets, objectsOfDeletedUsers: try objects(4))
        }
    }

    /// How many rows each of `CatalogTable.durable` holds, for `spotstore migrate` to
    /// compare; settings without a migration's own mark (`CatalogTable.migrationMark`).
    package func rowCounts() async throws -> [String: Int] {
        try await read { transaction in
            var counts: [String: Int] = [:]
            for name in CatalogTable.durable {
                let filter = name == "settings" ? " WHERE name <> '\(CatalogTable.migrationMark)'" : ""
                counts[name] = try await transaction.value("SELECT COUNT(*) FROM \(unescaped: name)\(unescaped: filter)", as: Int.self) ?? 0
            }
            return counts
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
    private typealias Repair = @Sendable (any CatalogTransaction) async throws -> Void

    /// The reference issues, each with its repair when it has one.
    private static func issues(_ transaction: any CatalogTransaction) async throws -> [(issue: CatalogIssue, repair: Repair?)] {
        var issues: [(issue: CatalogIssue, repair: Repair?)] = []
        // Objects in a spot that has no spot row: its owner (who may add to it) is unknown.
        for row in try await transaction.rows("""
            SELECT DISTINCT o.bucket, o.spot_id FROM objects o
            WHERE o.spot_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM spots s WHERE s.bucket = o.bucket AND s.id = o.spot_id)
            ORDER BY o.bucket, o.spot_id
            """) {
            let spot = SpotKey(bucket: try row(0), id: try row(1))
            issues.append((.spotWithoutRow(bucket: spot.bucket, id: spot.id), { transaction in
                try await transaction.run("""
                    INSERT INTO spots (bucket, id, owner, created_at)
                    SELECT bucket, spot_id, owner, created_at FROM objects WHERE bucket = \(spot.bucket) AND spot_id = \(spot.id)
                    ORDER BY created_at, id LIMIT 1
                    """)
                try await refreshLocation(of: spot, transaction)
            }))
        }
        // Spots whose derived location is not what their objects' photos give.
        for row in try await transaction.rows("SELECT \(unescaped: spotColumns) FROM spots ORDER BY bucket, id") {
            let spot = try SpotRecord(row)
            let key = SpotKey(bucket: spot.bucket, id: spot.id)
            var derived = spot
            derived.setLocation(try await derivedLocation(of: key, transaction))
            guard derived != spot else { continue }
            issues.append((.staleLocation(of: spot, derived: derived), { transaction in try await refreshLocation(of: key, transaction) }))
        }
        // Download tokens of no object (foreign keys normally prevent these).
        let orphanTokens = try await transaction.value(
            "SELECT COUNT(*) FROM download_tokens WHERE object_id NOT IN (SELECT id FROM objects)", as: Int.self) ?? 0
        if orphanTokens > 0 {
            issues.append((.orphanDownloadTokens(orphanTokens), { transaction in
                try await transaction.run("DELETE FROM download_tokens WHERE object_id NOT IN (SELECT id FROM objects)")
            }))
        }
        return issues
    }
}

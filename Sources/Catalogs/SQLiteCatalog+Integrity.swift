import Foundation
import GRDB
import CatalogPlanning
import SpotCore

/// A row of `damagedBlobs`: a blob `fsck --repair` found corrupt or missing.
struct DamagedBlobRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "damagedBlobs"

    var digest: String
    /// Why, as a phrase after "blob <digest>": "failed its checksum", "is missing".
    var reason: String
    var markedAt: Date
}

extension SQLiteCatalog {
    /// Blobs marked damaged by `fsck --repair`, by digest. Reads of objects and thumbnails
    /// using a marked blob fail with the reason instead of serving wrong bytes.
    ///
    /// Shipped: never change this.
    static func addDamagedBlobsV4(_ db: Database) throws {
        try db.create(table: DamagedBlobRecord.databaseTableName) { t in
            t.primaryKey("digest", .text)
            t.column("reason", .text).notNull()
            t.column("markedAt", .datetime).notNull()
        }
    }

    public func blobReferences() async throws -> BlobReferences {
        try readNow { db in
            var references = BlobReferences()
            for row in try Row.fetchAll(db, sql: "SELECT bucket, name, digest, size FROM objects ORDER BY bucket, name") {
                let path = "\(row["bucket"] as String)/\(row["name"] as String)"
                references.objects.append(.init(path: path, digest: try Self.digest(row["digest"], of: "object \(path)"), size: row["size"]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT digest, size, thumbDigest, byteCount FROM thumbnails ORDER BY digest, size, contentType") {
                let original = try Self.digest(row["digest"], of: "a thumbnail")
                references.thumbnails.append(.init(
                    original: original, edge: row["size"],
                    digest: try Self.digest(row["thumbDigest"], of: "thumbnail of \(original)"), byteCount: row["byteCount"]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT digest, freeDigest FROM locationFreeBlobs ORDER BY digest") {
                let original = try Self.digest(row["digest"], of: "a GPS-free copy")
                references.locationFree.append(.init(original: original, digest: try Self.digest(row["freeDigest"], of: "GPS-free copy of \(original)")))
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT digest, MAX(expiresAt) AS expiresAt FROM leasedBlobs JOIN leases ON leases.id = leasedBlobs.leaseId GROUP BY digest
                """) {
                references.leases[try Self.digest(row["digest"], of: "a lease")] = row["expiresAt"]
            }
            for hex in try String.fetchAll(db, sql: "SELECT DISTINCT digest FROM uploadChunks WHERE digest IS NOT NULL") {
                references.uploadChunks.insert(try Self.digest(hex, of: "an upload chunk"))
            }
            for record in try DamagedBlobRecord.fetchAll(db) {
                references.damaged[try Self.digest(record.digest, of: "a damaged blob")] = record.reason
            }
            return references
        }
    }

    public func referenceIssues() async throws -> [CatalogIssue] {
        try readNow { db in try Self.issues(db).map(\.issue) }
    }

    public func repairIssues() async throws -> Int {
        try await write { db in
            var fixed = 0
            for (issue, repair) in try Self.issues(db) where issue.repairable {
                try repair?(db)
                fixed += 1
            }
            return fixed
        }
    }

    public func markDamaged(_ digest: Digest, reason: String) async throws {
        try await write { db in
            try DamagedBlobRecord(digest: digest.hex, reason: reason, markedAt: Date()).upsert(db)
        }
    }

    public func damage(of digest: Digest) async throws -> String? {
        try readNow { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT reason FROM damagedBlobs WHERE digest = ?"), arguments: [digest.hex])
        }
    }

    @discardableResult
    public func clearDamage(of digest: Digest) async throws -> Bool {
        try await write { db in try DamagedBlobRecord.deleteOne(db, key: digest.hex) }
    }

    public func statistics() async throws -> CatalogStatistics {
        try readNow { db in
            let totals = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS bytes FROM objects")!
            // One size per digest: every object of a digest holds the same bytes.
            let unique = try Row.fetchOne(db, sql: """
                SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS bytes FROM (SELECT digest, MAX(size) AS size FROM objects GROUP BY digest)
                """)!
            let thumbnails = try Row.fetchOne(db, sql: """
                SELECT COUNT(*) AS n, COALESCE(SUM(byteCount), 0) AS bytes
                FROM (SELECT thumbDigest, MAX(byteCount) AS byteCount FROM thumbnails GROUP BY thumbDigest)
                """)!
            let buckets = try Row.fetchAll(db, sql: "SELECT bucket, COUNT(*) AS n, SUM(size) AS bytes FROM objects GROUP BY bucket ORDER BY bucket")
                .map { CatalogStatistics.Bucket(name: $0["bucket"], objects: $0["n"], bytes: $0["bytes"]) }
            let ofDeletedUsers = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM objects WHERE owner NOT IN (SELECT uid FROM users)") ?? 0
            return CatalogStatistics(
                objects: totals["n"], logicalBytes: totals["bytes"], uniqueOriginals: unique["n"], uniqueOriginalBytes: unique["bytes"],
                thumbnails: thumbnails["n"], thumbnailBytes: thumbnails["bytes"], buckets: buckets, objectsOfDeletedUsers: ofDeletedUsers)
        }
    }

    /// The digest stored as `hex`, or an error naming the row.
    private static func digest(_ hex: String, of what: String) throws -> Digest {
        guard let digest = Digest(hex: hex) else {
            throw SpotError(.internal, "the catalog holds an invalid digest '\(hex)' for \(what); restore catalog.sqlite from a backup")
        }
        return digest
    }

    /// The reference issues, each with its repair when it has one.
    private static func issues(_ db: Database) throws -> [(issue: CatalogIssue, repair: (@Sendable (Database) throws -> Void)?)] {
        var issues: [(issue: CatalogIssue, repair: (@Sendable (Database) throws -> Void)?)] = []
        // Objects in a spot that has no spot row: its owner (who may add to it) is unknown.
        for row in try Row.fetchAll(db, sql: """
            SELECT DISTINCT o.bucket, o.spotId FROM objects o
            WHERE o.spotId IS NOT NULL AND NOT EXISTS (SELECT 1 FROM spots s WHERE s.bucket = o.bucket AND s.id = o.spotId)
            ORDER BY o.bucket, o.spotId
            """) {
            let (bucket, id): (String, String) = (row["bucket"], row["spotId"])
            issues.append((.spotWithoutRow(bucket: bucket, id: id), { db in
                    try db.execute(sql: """
                        INSERT INTO spots (bucket, id, owner, createdAt)
                        SELECT bucket, spotId, owner, createdAt FROM objects WHERE bucket = ? AND spotId = ?
                        ORDER BY createdAt, id LIMIT 1
                        """, arguments: [bucket, id])
                    try refreshLocation(of: SpotKey(bucket: bucket, id: id), db)
                }))
        }
        // Spots whose derived location is not what their objects' photos give.
        for spot in try SpotRecord.order(SpotRecord.Columns.bucket, SpotRecord.Columns.id).fetchAll(db) {
            let key = SpotKey(bucket: spot.bucket, id: spot.id)
            var derived = spot
            derived.setLocation(try Self.derivedLocation(of: key, db))
            guard derived != spot else { continue }
            issues.append((.staleLocation(of: spot, derived: derived), { db in try refreshLocation(of: key, db) }))
        }
        // Download tokens of no object (foreign keys normally prevent these).
        let orphanTokens = try Int.fetchOne(db, sql: """
            SELECT COUNT(*) FROM downloadTokens WHERE objectId NOT IN (SELECT id FROM objects)
            """) ?? 0
        if orphanTokens > 0 {
            issues.append((.orphanDownloadTokens(orphanTokens), { db in
                    try db.execute(sql: "DELETE FROM downloadTokens WHERE objectId NOT IN (SELECT id FROM objects)")
                }))
        }
        return issues
    }
}

import Foundation
import SpotCore

extension SQLCatalog {
    /// From one snapshot; each table's rows of the prefix are a range of its digest index.
    public func blobReferences(withPrefix prefix: DigestPrefix) async throws -> BlobReferences {
        try await read { transaction in
            var references = BlobReferences()
            for row in try await transaction.rows("""
                SELECT bucket, name, digest, size FROM objects WHERE \(Self.digest("digest", startingWith: prefix)) ORDER BY bucket, name
                """) {
                let path = "\(try row(0) as String)/\(try row(1) as String)"
                references.objects.append(.init(path: path, digest: try storedDigest(row(2)), size: try row(3)))
            }
            for row in try await transaction.rows("""
                SELECT digest, size, thumb_digest, byte_count FROM thumbnails WHERE \(Self.digest("thumb_digest", startingWith: prefix))
                ORDER BY digest, size, content_type
                """) {
                references.thumbnails.append(.init(
                    original: try storedDigest(row(0)), edge: try row(1), digest: try storedDigest(row(2)), byteCount: try row(3)))
            }
            for row in try await transaction.rows("""
                SELECT digest, free_digest FROM location_free_blobs WHERE \(Self.digest("free_digest", startingWith: prefix)) ORDER BY digest
                """) {
                references.locationFree.append(.init(original: try storedDigest(row(0)), digest: try storedDigest(row(1))))
            }
            for row in try await transaction.rows("""
                SELECT digest, MAX(expires_at) FROM leased_blobs JOIN leases ON leases.id = leased_blobs.lease_id
                WHERE \(Self.digest("digest", startingWith: prefix)) GROUP BY digest
                """) {
                references.leases[try storedDigest(row(0))] = try row(1) as Date
            }
            for row in try await transaction.rows("""
                SELECT DISTINCT digest FROM upload_chunks WHERE digest IS NOT NULL AND \(Self.digest("digest", startingWith: prefix))
                """) {
                references.uploadChunks.insert(try storedDigest(row(0)))
            }
            for row in try await transaction.rows("SELECT digest, reason FROM damaged_blobs WHERE \(Self.digest("digest", startingWith: prefix))") {
                references.damaged[try storedDigest(row(0))] = try row(1) as String
            }
            return references
        }
    }

    /// `column` (a digest's hex) starts with `prefix`: a range of its index.
    static func digest(_ column: String, startingWith prefix: DigestPrefix) -> CatalogSQL {
        guard let end = prefix.successor else { return "\(unescaped: column) >= \(prefix.hex)" }
        return "\(unescaped: column) >= \(prefix.hex) AND \(unescaped: column) < \(end)"
    }

    /// From one snapshot.
    public func referenceIssues() async throws -> [CatalogIssue] {
        try await read { transaction in try await Self.issues(transaction).map(\.issue) }
    }

    /// Found in one snapshot, then each repaired in a short transaction of its own: a repair
    /// derives its state again from what is there then, so the server's writes wait for one
    /// repair at a time, never for the whole scan.
    public func repairIssues() async throws -> Int {
        var fixed = 0
        for (issue, repair) in try await read({ transaction in try await Self.issues(transaction) }) where issue.repairable {
            try await write { transaction in try await repair(transaction) }
            fixed += 1
        }
        return fixed
    }

    public func markDamaged(_ digest: Digest, reason: String) async throws {
        let now = clock()
        try await write { transaction in
            try await transaction.run("""
                INSERT INTO damaged_blobs (digest, reason, marked_at) VALUES (\(digest.hex), \(reason), \(now))
                ON CONFLICT (digest) DO UPDATE SET reason = excluded.reason, marked_at = excluded.marked_at
                """)
        }
    }

    public func damage(of digest: Digest) async throws -> String? {
        try await database.query("SELECT reason FROM damaged_blobs WHERE digest = \(digest.hex)").first.map { try $0(0) }
    }

    @discardableResult
    public func clearDamage(of digest: Digest) async throws -> Bool {
        try await write { transaction in
            try await transaction.row("DELETE FROM damaged_blobs WHERE digest = \(digest.hex) RETURNING digest") != nil
        }
    }

    /// From one snapshot.
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

    /// The expression counting the objects of `spot`, read in full (what repairs set its count to).
    private static func objectCount(of spot: SpotKey) -> CatalogSQL {
        "(SELECT COUNT(*) FROM objects WHERE bucket = \(spot.bucket) AND spot_id = \(spot.id))"
    }

    /// A repair of one reference issue, run in a transaction of its own; running it again
    /// changes nothing more.
    private typealias Repair = @Sendable (any CatalogTransaction) async throws -> Void

    /// The reference issues, each with its repair.
    private static func issues(_ transaction: any CatalogTransaction) async throws -> [(issue: CatalogIssue, repair: Repair)] {
        var issues: [(issue: CatalogIssue, repair: Repair)] = []
        // Objects whose position is not their photo's (first: the spots' locations are derived from these).
        let strayPositions: CatalogSQL = """
            objects.latitude IS DISTINCT FROM \(position("latitude", ofDigest: "objects.digest"))
            OR objects.longitude IS DISTINCT FROM \(position("longitude", ofDigest: "objects.digest"))
            """
        let strays = try await transaction.value("SELECT COUNT(*) FROM objects WHERE \(strayPositions)", as: Int.self) ?? 0
        if strays > 0 {
            let issue = CatalogIssue(
                problem: (strays == 1 ? "1 object records a position that is not its photo's" : "\(strays) objects record positions that are not their photos'")
                    + " (derived state out of date)",
                remedy: "run `spotstore fsck --repair` to copy it again from the photos", repairable: true)
            issues.append((issue, { transaction in
                try await transaction.run("UPDATE objects SET \(photoPositions(ofDigest: "objects.digest")) WHERE \(strayPositions)")
            }))
        }
        // Objects in a spot that has no spot row: its owner (who may add to it) is unknown.
        for row in try await transaction.rows("""
            SELECT DISTINCT o.bucket, o.spot_id FROM objects o
            WHERE o.spot_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM spots s WHERE s.bucket = o.bucket AND s.id = o.spot_id)
            ORDER BY o.bucket, o.spot_id
            """) {
            let spot = SpotKey(bucket: try row(0), id: try row(1))
            let issue = CatalogIssue(
                problem: "spot \(spot.bucket)/\(spot.id) has objects but no spot row (its owner is unknown)",
                remedy: "run `spotstore fsck --repair` to recreate it, owned by the owner of its oldest object", repairable: true)
            issues.append((issue, { transaction in
                try await transaction.run("""
                    INSERT INTO spots (bucket, id, owner, created_at, object_count)
                    SELECT bucket, spot_id, owner, created_at, \(objectCount(of: spot))
                    FROM objects WHERE bucket = \(spot.bucket) AND spot_id = \(spot.id)
                      AND NOT EXISTS (SELECT 1 FROM spots WHERE bucket = \(spot.bucket) AND id = \(spot.id))
                    ORDER BY created_at, id LIMIT 1
                    """)
                try await refreshLocation(of: spot, transaction)
            }))
        }
        // Spots whose count or location is not what their objects give, read in full, a page
        // of spots at a time (memory holds a page, however many spots there are).
        var after: SpotKey?
        while true {
            var page: CatalogSQL = """
                SELECT \(unescaped: spotColumns), (SELECT COUNT(*) FROM objects WHERE objects.bucket = spots.bucket AND objects.spot_id = spots.id)
                FROM spots
                """
            if let after { page = page + " WHERE (bucket, id) > (\(after.bucket), \(after.id))" }
            let rows = try await transaction.rows(page + " ORDER BY bucket, id LIMIT \(spotsPerScan)")
            for row in rows { try await checkSpot(row, into: &issues, transaction) }
            guard rows.count == spotsPerScan, let last = rows.last else { break }
            after = SpotKey(bucket: try last(0), id: try last(1))
        }
        // Download tokens of no object (foreign keys normally prevent these).
        let orphanTokens = try await transaction.value(
            "SELECT COUNT(*) FROM download_tokens WHERE object_id NOT IN (SELECT id FROM objects)", as: Int.self) ?? 0
        if orphanTokens > 0 {
            let issue = CatalogIssue(
                problem: "\(orphanTokens) download token\(orphanTokens == 1 ? "" : "s") of objects that no longer exist",
                remedy: "run `spotstore fsck --repair` to delete them", repairable: true)
            issues.append((issue, { transaction in
                try await transaction.run("DELETE FROM download_tokens WHERE object_id NOT IN (SELECT id FROM objects)")
            }))
        }
        return issues
    }

    /// How many spots the scan for issues reads at once.
    private static var spotsPerScan: Int { 1000 }

    /// The issues of one spot row of the scan (its columns, then the count of its objects):
    /// a count or location that is not what its objects give.
    private static func checkSpot(_ row: SQLRow, into issues: inout [(issue: CatalogIssue, repair: Repair)], _ transaction: any CatalogTransaction) async throws {
        let spot = try SpotRecord(row)
        let key = SpotKey(bucket: spot.bucket, id: spot.id)
        var derived = spot
        derived.objectCount = try row(20)
        derived.setLocation(try await locationFromAllPhotos(of: key, transaction))
        if derived.objectCount != spot.objectCount {
            let issue = CatalogIssue(
                problem: "spot \(spot.bucket)/\(spot.id) records \(spot.objectCount) objects but holds \(derived.objectCount) (derived state out of date)",
                remedy: "run `spotstore fsck --repair` to count them again", repairable: true)
            issues.append((issue, { transaction in
                try await transaction.run("""
                    UPDATE spots SET object_count = \(objectCount(of: key)) WHERE bucket = \(key.bucket) AND id = \(key.id)
                    """)
            }))
        }
        derived.objectCount = spot.objectCount
        guard derived != spot else { return }
        let what = derived.location == nil ? "a location none of its objects' photos has" : "a location that is not its first geotagged photo's"
        let issue = CatalogIssue(
            problem: "spot \(spot.bucket)/\(spot.id) records \(what) (derived state out of date)",
            remedy: "run `spotstore fsck --repair` to derive it again from its objects", repairable: true)
        issues.append((issue, { transaction in try await refreshLocation(of: key, transaction) }))
    }
}

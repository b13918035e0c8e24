import Foundation
import SpotCore

extension SQLCatalog {
    /// The spot `id` in `bucket` with its owner and current object count, or `nil` when no
    /// object was ever committed in it. A spot whose objects were all removed is still
    /// there, with a count of 0, and keeps its owner.
    public func spot(bucket: String, id: String) async throws -> SpotState? {
        try Self.spotState(try await database.query(Self.spotStateQuery(bucket: bucket, id: id)).first, bucket: bucket, id: id)
    }

    /// The object at `path`, with the photo metadata and thumbnails of its blob, or `nil`.
    public func object(at path: ObjectPath) async throws -> StoredObject? {
        try await read { transaction in try await Self.fetchObject(at: path, transaction) }
    }

    /// The object, its spot and the damage marks of its blobs in one snapshot, kept while
    /// the change feed's stamp stays the same; the object's own mark comes with its row.
    public func objectForReading(at path: ObjectPath) async throws -> ObjectReading {
        try await memo.objectForReading(at: path) {
            try await read { transaction in
                var spot: SpotState?
                if let id = path.topFolder {
                    spot = try Self.spotState(try await transaction.row(Self.spotStateQuery(bucket: path.bucket, id: id)), bucket: path.bucket, id: id)
                }
                guard let row = try await transaction.row("""
                    SELECT \(unescaped: objectColumns), (SELECT reason FROM damaged_blobs WHERE damaged_blobs.digest = objects.digest)
                    FROM objects WHERE bucket = \(path.bucket) AND name = \(path.name)
                    """)
                else { return ObjectReading(object: nil, spot: spot) }
                var object = try storedObject(row)
                let details = try await Self.blobDetails(of: [object.digest], transaction)[object.digest]
                object.photo = details?.photo
                object.thumbnails = details?.thumbnails ?? []
                var damage = details?.thumbnailDamage ?? [:]
                if let reason: String = try row(objectColumnCount) { damage[object.digest] = reason }
                return ObjectReading(object: object, spot: spot, damage: damage)
            }
        }
    }

    /// The statement reading a spot's owner, privacy and object count (no row without a spot row).
    static func spotStateQuery(bucket: String, id: String) -> CatalogSQL {
        """
        SELECT owner, hides_location, (SELECT COUNT(*) FROM objects WHERE bucket = \(bucket) AND spot_id = \(id))
        FROM spots WHERE bucket = \(bucket) AND id = \(id)
        """
    }

    /// The spot state in the row `spotStateQuery` gave, or `nil` without one.
    static func spotState(_ row: SQLRow?, bucket: String, id: String) throws -> SpotState? {
        guard let row else { return nil }
        return SpotState(bucket: bucket, id: id, owner: try row(0), objectCount: try row(2), hidesLocation: try row(1))
    }

    /// For each of `digests` that `owner` already stores in `bucket`, the names holding it,
    /// in name order; digests without such an object are absent. One query per 500 digests.
    public func names(ofDigests digests: [Digest], ownedBy owner: String, in bucket: String) async throws -> [Digest: [String]] {
        let distinct = Array(Set(digests.map(\.hex)))
        var names: [Digest: [String]] = [:]
        for start in stride(from: 0, to: distinct.count, by: 500) {
            let batch = Array(distinct[start..<min(start + 500, distinct.count)])
            for row in try await database.query("""
                SELECT digest, name FROM objects WHERE bucket = \(bucket) AND owner = \(owner) AND digest \(oneOf: batch) ORDER BY name
                """) {
                guard let digest = Digest(hex: try row(0)) else { continue }
                names[digest, default: []].append(try row(1))
            }
        }
        return names
    }

    /// Photo metadata and thumbnails (by size) already known for a blob, or `nil` when the
    /// blob has no photo metadata (thumbnails alone are not reported).
    public func photoDetails(of digest: Digest) async throws -> (photo: PhotoMetadata, thumbnails: [Thumbnail])? {
        let details = try await read { transaction in try await Self.blobDetails(of: [digest], transaction)[digest] }
        guard let photo = details?.photo else { return nil }
        return (photo, details?.thumbnails ?? [])
    }

    /// Writes `object` in one transaction, replacing an object at the same path, and returns it as stored.
    ///
    /// A replacement keeps the object's `createdAt` and id, sets `updatedAt`, takes the new
    /// digest, size, content type, owner, MD5, settings and generation (metageneration 1),
    /// and loses its download tokens; then `object.downloadTokenDigest` is recorded. The
    /// upload session `object.uploadSession` completes is removed (`.notFound` when it is
    /// gone) and recorded as finished (`finishedUpload(_:)`). When `object.path` has a
    /// `topFolder`, the spot is that folder: its admission lock is held throughout, so
    /// commits and session starts into one spot, from any connection or process, take
    /// turns, and `admission` decides on the spot as it is then, counting the places its
    /// other live upload sessions hold (`SpotOccupancy`); the spot's row is created owned by
    /// `object.owner` if absent. In the same transaction: the lease is checked and
    /// released, damage marks of the stored blobs are cleared, photo metadata and
    /// thumbnails are upserted per blob digest (thumbnails of other sizes stay), and the
    /// derived location of the object's spot is brought up to date, and so is that of
    /// every spot showing the same bytes when their photo metadata changed.
    public func commit(_ object: NewObject, admission: SpotAdmission) async throws -> StoredObject {
        let now = clock()
        return try await write { transaction in
            let (bucket, name) = (object.path.bucket, object.path.name)
            let spot = object.path.topFolder.map { SpotKey(bucket: bucket, id: $0) }
            if let spot { try await transaction.lock([spot.admissionLock]) }
            if let session = object.uploadSession {
                guard let owner = try await transaction.value("DELETE FROM upload_sessions WHERE id = \(session) RETURNING owner", as: String.self)
                else { throw SpotError.uploadSessionGone }
                try await Self.insert(FinishedUploadRecord(session: session, owner: owner, committed: object, at: now), transaction)
            }
            if let spot { try await Self.admit(object, to: spot, admission: admission, at: now, transaction) }
            if let lease = object.lease { try await Self.release(heldLease: lease, transaction) }
            let stored = [object.digest.hex] + object.thumbnails.map(\.digest.hex)
            try await transaction.run("DELETE FROM damaged_blobs WHERE digest \(oneOf: stored)")
            guard let objectId = try await transaction.value("""
                INSERT INTO objects (
                    bucket, name, spot_id, digest, size, content_type, owner, created_at, updated_at, md5, settings_json, generation,
                    metageneration)
                VALUES (\(bucket), \(name), \(object.path.topFolder), \(object.digest.hex), \(object.size), \(object.contentType),
                        \(object.owner), \(now), \(now), \(storedHex(md5: object.md5)), \(object.settings.storedJSON), \(object.generation), 1)
                ON CONFLICT (bucket, name) DO UPDATE SET digest = excluded.digest, size = excluded.size,
                    content_type = excluded.content_type, owner = excluded.owner, updated_at = excluded.updated_at, md5 = excluded.md5,
                    settings_json = excluded.settings_json, generation = excluded.generation, metageneration = 1
                RETURNING id
                """, as: Int64.self)
            else { throw SpotError(.internal, "the catalog wrote object \(object.path) without an id") }
            try await transaction.run("DELETE FROM download_tokens WHERE object_id = \(objectId)")
            if let token = object.downloadTokenDigest {
                _ = try await Self.insertDownloadToken(token, of: objectId, at: now, transaction)
            }
            var staleSpots: Set<SpotKey> = []
            if let spot { staleSpots.insert(spot) }
            if let photo = object.photo, try await Self.upsert(PhotoRecord(digest: object.digest, photo), transaction) {
                // Every spot showing these bytes may have a new location.
                for row in try await transaction.rows("""
                    SELECT DISTINCT bucket, spot_id FROM objects WHERE digest = \(object.digest.hex) AND spot_id IS NOT NULL
                    """) {
                    staleSpots.insert(SpotKey(bucket: try row(0), id: try row(1)))
                }
            }
            for thumbnail in object.thumbnails {
                try await transaction.run("""
                    INSERT INTO thumbnails (digest, \(unescaped: thumbnailColumns))
                    VALUES (\(object.digest.hex), \(thumbnail.size), \(thumbnail.digest.hex), \(thumbnail.width), \(thumbnail.height),
                            \(thumbnail.byteCount), \(thumbnail.contentType))
                    ON CONFLICT (digest, size, content_type) DO UPDATE SET thumb_digest = excluded.thumb_digest, width = excluded.width,
                        height = excluded.height, byte_count = excluded.byte_count
                    """)
            }
            // In key order, so two commits refreshing the same spots lock them in the same order.
            for spot in staleSpots.sorted(by: { ($0.bucket, $0.id) < ($1.bucket, $1.id) }) {
                try await Self.refreshLocation(of: spot, transaction)
            }
            // Read back, so the dates are exactly what later reads will see.
            guard let stored = try await Self.fetchObject(at: object.path, transaction) else {
                throw SpotError(.internal, "object \(object.path) vanished while it was being committed")
            }
            return stored
        }
    }

    /// Replaces the content type and settings of the object at `path`, adds one to its
    /// metageneration and sets `updated_at`, in one transaction holding the object's row
    /// (`CatalogSQL.forUpdate`), so a replacement meanwhile is seen; `nil` when absent.
    /// - Throws: `.conflict` when the object's generation is no longer `generation`.
    public func updateMetadata(
        of path: ObjectPath, generation: Int64, contentType: String, settings: ObjectSettings
    ) async throws -> StoredObject? {
        let now = clock()
        return try await write { transaction in
            guard let current = try await transaction.value(
                "SELECT generation FROM objects WHERE bucket = \(path.bucket) AND name = \(path.name)" + .forUpdate, as: Int64.self)
            else { return nil }
            guard current == generation else { throw SpotError.replacedDuringMetadataUpdate(of: path) }
            try await transaction.run("""
                UPDATE objects SET content_type = \(contentType), settings_json = \(settings.storedJSON),
                    metageneration = metageneration + 1, updated_at = \(now)
                WHERE bucket = \(path.bucket) AND name = \(path.name)
                """)
            return try await Self.fetchObject(at: path, transaction)
        }
    }

    /// Removes the object at `path` and returns it, or `nil` when absent. Its download
    /// tokens go with it (cascade); its blob, photo metadata and thumbnails stay for
    /// garbage collection; its spot stays, its derived location brought up to date.
    public func removeObject(at path: ObjectPath) async throws -> StoredObject? {
        try await write { transaction in
            guard let stored = try await Self.fetchObject(at: path, transaction) else { return nil }
            try await transaction.run("DELETE FROM objects WHERE bucket = \(path.bucket) AND name = \(path.name)")
            if let spotId = path.topFolder {
                try await Self.refreshLocation(of: SpotKey(bucket: path.bucket, id: spotId), transaction)
            }
            return stored
        }
    }

    /// Lets `object` into `spot` (whose admission lock is held), creating its row if
    /// absent, or throws why not. Its upload session, if any, was removed already, so it
    /// does not count; nor do sessions of its own name (it takes that place itself) or
    /// sessions expired by `now`.
    private static func admit(
        _ object: NewObject, to spot: SpotKey, admission: SpotAdmission, at now: Date, _ transaction: any CatalogTransaction
    ) async throws {
        let (occupancy, isReplacement) = try await lockedOccupancy(
            of: spot, admitting: object.path.name, by: SpotOccupancy.counted(object.owner, admission), now: now, transaction)
        if let refusal = occupancy.refusal(of: object.owner, admission: admission, isReplacement: isReplacement) { throw refusal }
        guard occupancy.owner == nil else { return }
        try await transaction.run("""
            INSERT INTO spots (bucket, id, owner, created_at) VALUES (\(spot.bucket), \(spot.id), \(object.owner), \(now))
            ON CONFLICT (bucket, id) DO NOTHING
            """)
    }

    /// The owner (`nil` without a row, else the row locked), objects and upload sessions'
    /// places of `spot` as admission counts them for `name` at `now` (see `SpotOccupancy`:
    /// the distinct names other than `name` that a session expiring after `now` is
    /// uploading and no object has), and whether `name` holds an object; read under the
    /// spot's admission lock, so the counts are current.
    static func lockedOccupancy(
        of spot: SpotKey, admitting name: String, by uploader: String?, now: Date, _ transaction: any CatalogTransaction
    ) async throws -> (occupancy: SpotOccupancy, isReplacement: Bool) {
        let owner = try await transaction.value(
            "SELECT owner FROM spots WHERE bucket = \(spot.bucket) AND id = \(spot.id)" + .forUpdate, as: String.self)
        guard let counts = try await transaction.row("""
            SELECT (SELECT COUNT(*) FROM objects WHERE bucket = \(spot.bucket) AND spot_id = \(spot.id)),
                (SELECT COUNT(DISTINCT s.name) FROM upload_sessions s
                 WHERE s.bucket = \(spot.bucket) AND s.spot_id = \(spot.id) AND s.expires_at > \(now) AND s.name <> \(name)
                   AND (CAST(\(uploader) AS TEXT) IS NULL OR s.owner = \(uploader))
                   AND NOT EXISTS (SELECT 1 FROM objects o WHERE o.bucket = s.bucket AND o.name = s.name)),
                EXISTS (SELECT 1 FROM objects WHERE bucket = \(spot.bucket) AND name = \(name))
            """)
        else { throw SpotError(.internal, "the catalog did not count spot \(spot.bucket)/\(spot.id)") }
        let occupancy = SpotOccupancy(bucket: spot.bucket, id: spot.id, owner: owner, objects: try counts(0), sessions: try counts(1))
        return (occupancy, try counts(2))
    }

    /// Upserts `photo` in one statement; `true` when it was new or changed.
    private static func upsert(_ photo: PhotoRecord, _ transaction: any CatalogTransaction) async throws -> Bool {
        try await !transaction.rows("""
            INSERT INTO photos (\(unescaped: photoColumns)) VALUES (\(photo.values))
            ON CONFLICT (digest) DO UPDATE SET \(unescaped: photoUpsert.set) WHERE \(unescaped: photoUpsert.changed)
            RETURNING digest
            """).isEmpty
    }

    /// The object at `path` as stored, or `nil`.
    static func fetchObject(at path: ObjectPath, _ transaction: any CatalogTransaction) async throws -> StoredObject? {
        try await storedObjects(in: path.bucket, where: "name", isIn: [path.name], transaction).first
    }

    /// The objects of `bucket` whose `column` (`name` or `spot_id`) is one of `values`, in
    /// name order, with their blobs' photo details.
    static func storedObjects(
        in bucket: String, where column: StaticString, isIn values: [String], _ transaction: any CatalogTransaction
    ) async throws -> [StoredObject] {
        var objects = try await transaction.rows("""
            SELECT \(unescaped: objectColumns) FROM objects WHERE bucket = \(bucket) AND \(unescaped: "\(column)") \(oneOf: values)
            ORDER BY name
            """).map(storedObject)
        let details = try await blobDetails(of: Set(objects.map(\.digest)), transaction)
        for index in objects.indices {
            objects[index].photo = details[objects[index].digest]?.photo
            objects[index].thumbnails = details[objects[index].digest]?.thumbnails ?? []
        }
        return objects
    }

    /// The photo metadata, thumbnails (by size) and damage marks of the thumbnails' blobs
    /// recorded for each of `digests` that has any: two queries.
    static func blobDetails(
        of digests: some Collection<Digest>, _ transaction: any CatalogTransaction
    ) async throws -> [Digest: (photo: PhotoMetadata?, thumbnails: [Thumbnail], thumbnailDamage: [Digest: String])] {
        guard !digests.isEmpty else { return [:] }
        let hexes = digests.map(\.hex)
        var details: [Digest: (photo: PhotoMetadata?, thumbnails: [Thumbnail], thumbnailDamage: [Digest: String])] = [:]
        for row in try await transaction.rows("SELECT \(unescaped: photoColumns) FROM photos WHERE digest \(oneOf: hexes)") {
            let photo = try PhotoRecord(row)
            details[try storedDigest(photo.digest)] = (photo.metadata, [], [:])
        }
        for row in try await transaction.rows("""
            SELECT \(unescaped: thumbnailColumns), digest,
                (SELECT reason FROM damaged_blobs WHERE damaged_blobs.digest = thumbnails.thumb_digest)
            FROM thumbnails WHERE digest \(oneOf: hexes) ORDER BY digest, size, content_type
            """) {
            let thumbnail = try Thumbnail(row)
            let digest = try storedDigest(row(6))
            details[digest, default: (nil, [], [:])].thumbnails.append(thumbnail)
            if let damage: String = try row(7) { details[digest, default: (nil, [], [:])].thumbnailDamage[thumbnail.digest] = damage }
        }
        return details
    }
}

extension SpotKey {
    /// The lock that commits and session starts into this spot take, whether or not the
    /// spot has a row yet (a row lock needs a row).
    var admissionLock: String { "spot \(bucket)/\(id)" }
}

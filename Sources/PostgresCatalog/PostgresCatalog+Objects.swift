import CatalogPlanning
import Foundation
import PostgresNIO
import SpotCore

extension PostgresCatalog {
    /// The spot `id` in `bucket` with its owner and current object count, or `nil` when no
    /// object was ever committed in it. A spot whose objects were all removed is still
    /// there, with a count of 0, and keeps its owner.
    public func spot(bucket: String, id: String) async throws -> SpotState? {
        try await Self.spotState(rows: query(Self.spotStateQuery(bucket: bucket, id: id)), bucket: bucket, id: id)
    }

    /// The object at `path`, with the photo metadata and thumbnails of its blob, or `nil`.
    public func object(at path: ObjectPath) async throws -> StoredObject? {
        try await read { connection in try await Self.fetchObject(at: path, connection, logger: self.logger) }
    }

    /// The object, its spot and the damage marks of its blobs in one snapshot, kept while
    /// the change feed's stamp stays the same.
    public func objectForReading(at path: ObjectPath) async throws -> ObjectReading {
        try await memo.objectForReading(at: path) {
            try await read { connection in
                var spot: SpotState?
                if let id = path.topFolder {
                    let rows = try await connection.query(Self.spotStateQuery(bucket: path.bucket, id: id), logger: self.logger).collect()
                    spot = try Self.spotState(rows: rows, bucket: path.bucket, id: id)
                }
                guard let row = try await connection.query("""
                    SELECT \(unescaped: Self.objectColumns), (SELECT reason FROM damaged_blobs d WHERE d.digest = objects.digest)
                    FROM objects WHERE bucket = \(path.bucket) AND name = \(path.name)
                    """, logger: self.logger).collect().first
                else { return ObjectReading(object: nil, spot: spot) }
                var object = try Self.storedObject(row)
                let details = try await Self.blobDetails(of: [object.digest], connection, logger: self.logger)[object.digest]
                object.photo = details?.photo
                object.thumbnails = details?.thumbnails ?? []
                var damage = details?.thumbnailDamage ?? [:]
                if let reason = try row.decode(String?.self, at: Self.objectColumnCount) { damage[object.digest] = reason }
                return ObjectReading(object: object, spot: spot, damage: damage)
            }
        }
    }

    /// The statement reading a spot's owner, privacy and object count.
    private static func spotStateQuery(bucket: String, id: String) -> PostgresQuery {
        """
        SELECT owner, hides_location, (SELECT COUNT(*) FROM objects WHERE bucket = \(bucket) AND spot_id = \(id))
        FROM spots WHERE bucket = \(bucket) AND id = \(id)
        """
    }

    /// The spot state `spotStateQuery` read, or `nil` when the spot has no row.
    private static func spotState(rows: [PostgresRow], bucket: String, id: String) throws -> SpotState? {
        guard let row = rows.first else { return nil }
        let (owner, hidesLocation, count) = try row.decode((String, Bool, Int).self)
        return SpotState(bucket: bucket, id: id, owner: owner, objectCount: count, hidesLocation: hidesLocation)
    }

    /// For each of `digests` that `owner` already stores in `bucket`, the names holding it,
    /// in name order; digests without such an object are absent. One query.
    public func names(ofDigests digests: [Digest], ownedBy owner: String, in bucket: String) async throws -> [Digest: [String]] {
        let hexes = Array(Set(digests.map(\.hex)))
        var names: [Digest: [String]] = [:]
        for row in try await query("""
            SELECT digest, name FROM objects WHERE bucket = \(bucket) AND owner = \(owner) AND digest = ANY(\(hexes)) ORDER BY name
            """) {
            let (hex, name) = try row.decode((String, String).self)
            guard let digest = Digest(hex: hex) else { continue }
            names[digest, default: []].append(name)
        }
        return names
    }

    /// Photo metadata and thumbnails (by size) already known for a blob, or `nil` when the
    /// blob has no photo metadata (thumbnails alone are not reported).
    public func photoDetails(of digest: Digest) async throws -> (photo: PhotoMetadata, thumbnails: [Thumbnail])? {
        let details = try await read { connection in
            try await Self.blobDetails(of: [digest], connection, logger: self.logger)[digest]
        }
        guard let photo = details?.photo else { return nil }
        return (photo, details?.thumbnails ?? [])
    }

    /// Writes `object` in one transaction, replacing an object at the same path, and returns it as stored.
    ///
    /// As the SQLite catalog does (see `Catalog.commit`): a replacement keeps `createdAt`,
    /// takes metageneration 1 and loses its download tokens, then `object.downloadTokenDigest`
    /// is recorded; the upload session it completes is removed (`.notFound` when gone) and
    /// recorded as finished (`finishedUpload(_:)`); in a
    /// spot, the spot's admission lock is taken (`lockAdmission`), so commits and session
    /// starts into one spot from any connection or process take turns, and `admission`
    /// decides on the spot as it is then, counting the places its other live sessions hold;
    /// the spot row is created if absent; the lease is checked and released; damage marks of
    /// the stored blobs are cleared;
    /// photo metadata and thumbnails are upserted per blob digest; the derived location of
    /// the object's spot, and of every spot showing the same bytes when their photo
    /// metadata changed, is brought up to date.
    public func commit(_ object: NewObject, admission: SpotAdmission) async throws -> StoredObject {
        try await write { connection in
            let now = Date()
            let logger = self.logger
            let (bucket, name) = (object.path.bucket, object.path.name)
            let spot = object.path.topFolder.map { SpotKey(bucket: bucket, id: $0) }
            if let spot { try await Self.lockAdmission(to: spot, connection, logger: logger) }
            if let session = object.uploadSession {
                guard let owner = try await connection.query(
                    "DELETE FROM upload_sessions WHERE id = \(session) RETURNING owner", logger: logger
                ).collect().first?.decode(String.self, at: 0) else { throw SpotError.uploadSessionGone }
                try await Self.insert(
                    FinishedUploadRecord(session: session, owner: owner, committed: object, at: now), connection, logger: logger)
            }
            if let spot { try await Self.admit(object, to: spot, admission: admission, at: now, connection, logger: logger) }
            if let lease = object.lease { try await Self.release(heldLease: lease, connection, logger: logger) }
            let stored = [object.digest.hex] + object.thumbnails.map(\.digest.hex)
            try await connection.query("DELETE FROM damaged_blobs WHERE digest = ANY(\(stored))", logger: logger)
            let written = try await connection.query("""
                INSERT INTO objects (
                    bucket, name, spot_id, digest, size, content_type, owner, created_at, updated_at, md5, settings_json, generation,
                    metageneration)
                VALUES (\(bucket), \(name), \(object.path.topFolder), \(object.digest.hex), \(object.size), \(object.contentType),
                        \(object.owner), \(now), \(now), \(storedHex(md5: object.md5)), \(object.settings.storedJSON), \(object.generation), 1)
                ON CONFLICT (bucket, name) DO UPDATE SET digest = EXCLUDED.digest, size = EXCLUDED.size,
                    content_type = EXCLUDED.content_type, owner = EXCLUDED.owner, updated_at = EXCLUDED.updated_at, md5 = EXCLUDED.md5,
                    settings_json = EXCLUDED.settings_json, generation = EXCLUDED.generation, metageneration = 1
                RETURNING id
                """, logger: logger).collect().first?.decode(Int64.self, at: 0)
            guard let objectId = written else { throw SpotError(.internal, "the catalog wrote object \(object.path) without an id") }
            try await connection.query("DELETE FROM download_tokens WHERE object_id = \(objectId)", logger: logger)
            if let token = object.downloadTokenDigest {
                _ = try await Self.insertDownloadToken(token, of: objectId, at: now, connection, logger: logger)
            }
            var staleSpots: Set<SpotKey> = []
            if let spotId = object.path.topFolder { staleSpots.insert(SpotKey(bucket: bucket, id: spotId)) }
            if let photo = object.photo, try await Self.upsert(PhotoRecord(digest: object.digest, photo), connection, logger: logger) {
                // Every spot showing these bytes may have a new location.
                for row in try await connection.query("""
                    SELECT DISTINCT bucket, spot_id FROM objects WHERE digest = \(object.digest.hex) AND spot_id IS NOT NULL
                    """, logger: logger).collect() {
                    let (bucket, id) = try row.decode((String, String).self)
                    staleSpots.insert(SpotKey(bucket: bucket, id: id))
                }
            }
            for thumbnail in object.thumbnails {
                try await connection.query("""
                    INSERT INTO thumbnails (digest, \(unescaped: Self.thumbnailColumns))
                    VALUES (\(object.digest.hex), \(thumbnail.size), \(thumbnail.digest.hex), \(thumbnail.width), \(thumbnail.height),
                            \(thumbnail.byteCount), \(thumbnail.contentType))
                    ON CONFLICT (digest, size, content_type) DO UPDATE SET thumb_digest = EXCLUDED.thumb_digest, width = EXCLUDED.width,
                        height = EXCLUDED.height, byte_count = EXCLUDED.byte_count
                    """, logger: logger)
            }
            // In key order, so two commits refreshing the same spots lock them in the same order.
            for spot in staleSpots.sorted(by: { ($0.bucket, $0.id) < ($1.bucket, $1.id) }) {
                try await Self.refreshLocation(of: spot, connection, logger: logger)
            }
            // Read back, so the dates are exactly what later reads will see.
            guard let stored = try await Self.fetchObject(at: object.path, connection, logger: logger) else {
                throw SpotError(.internal, "object \(object.path) vanished while it was being committed")
            }
            return stored
        }
    }

    /// Replaces the content type and settings of the object at `path`, adds one to its
    /// metageneration and sets `updated_at`, in one transaction holding the object's row
    /// (`FOR UPDATE`), so a replacement meanwhile is seen; `nil` when absent.
    /// - Throws: `.conflict` when the object's generation is no longer `generation`.
    public func updateMetadata(
        of path: ObjectPath, generation: Int64, contentType: String, settings: ObjectSettings
    ) async throws -> StoredObject? {
        try await write { connection in
            guard let current = try await connection.query("""
                SELECT generation FROM objects WHERE bucket = \(path.bucket) AND name = \(path.name) FOR UPDATE
                """, logger: self.logger).collect().first?.decode(Int64.self, at: 0)
            else { return nil }
            guard current == generation else { throw SpotError.replacedDuringMetadataUpdate(of: path) }
            try await connection.query("""
                UPDATE objects SET content_type = \(contentType), settings_json = \(settings.storedJSON),
                    metageneration = metageneration + 1, updated_at = \(Date())
                WHERE bucket = \(path.bucket) AND name = \(path.name)
                """, logger: self.logger)
            return try await Self.fetchObject(at: path, connection, logger: self.logger)
        }
    }

    /// Removes the object at `path` and returns it, or `nil` when absent. Its download
    /// tokens go with it (cascade); its blob, photo metadata and thumbnails stay for
    /// garbage collection; its spot stays, its derived location brought up to date.
    public func removeObject(at path: ObjectPath) async throws -> StoredObject? {
        try await write { connection in
            guard let stored = try await Self.fetchObject(at: path, connection, logger: self.logger) else { return nil }
            try await connection.query("DELETE FROM objects WHERE bucket = \(path.bucket) AND name = \(path.name)", logger: self.logger)
            if let spotId = path.topFolder {
                try await Self.refreshLocation(of: SpotKey(bucket: path.bucket, id: spotId), connection, logger: self.logger)
            }
            return stored
        }
    }

    /// Lets `object` into `spot` (whose admission lock is held), creating its row if
    /// absent, or throws why not. Its upload session, if any, was removed already, so it
    /// does not count; nor do sessions of its own name (it takes that place itself) or
    /// sessions expired by `now`.
    private static func admit(
        _ object: NewObject, to spot: SpotKey, admission: SpotAdmission, at now: Date, _ connection: PostgresConnection, logger: Logger
    ) async throws {
        let (occupancy, isReplacement) = try await lockedOccupancy(
            of: spot, admitting: object.path.name, by: SpotOccupancy.counted(object.owner, admission), now: now, connection, logger: logger)
        if let refusal = occupancy.refusal(of: object.owner, admission: admission, isReplacement: isReplacement) { throw refusal }
        guard occupancy.owner == nil else { return }
        try await connection.query("""
            INSERT INTO spots (bucket, id, owner, created_at) VALUES (\(spot.bucket), \(spot.id), \(object.owner), \(now))
            ON CONFLICT (bucket, id) DO NOTHING
            """, logger: logger)
    }

    /// Takes the transaction's advisory lock of admission into `spot`: commits and session
    /// starts into one spot, from any connection or process, take turns, whether or not the
    /// spot has a row yet (a row lock needs a row).
    static func lockAdmission(to spot: SpotKey, _ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtextextended(\("spot \(spot.bucket)/\(spot.id)"), 0))", logger: logger)
    }

    /// The owner (`nil` without a row, else the row locked `FOR UPDATE`), objects and upload
    /// sessions' places of `spot` as admission counts them for `name` at `now` (see
    /// `SpotOccupancy`: the distinct names other than `name` that a session expiring after
    /// `now` is uploading and no object has), and whether `name` holds an object; read after
    /// `lockAdmission`, so the counts are current.
    static func lockedOccupancy(
        of spot: SpotKey, admitting name: String, by uploader: String?, now: Date, _ connection: PostgresConnection, logger: Logger
    ) async throws -> (occupancy: SpotOccupancy, isReplacement: Bool) {
        let owner = try await connection.query(
            "SELECT owner FROM spots WHERE bucket = \(spot.bucket) AND id = \(spot.id) FOR UPDATE", logger: logger
        ).collect().first?.decode(String.self, at: 0)
        let counts = try await connection.query("""
            SELECT (SELECT COUNT(*) FROM objects WHERE bucket = \(spot.bucket) AND spot_id = \(spot.id)),
                (SELECT COUNT(DISTINCT s.name) FROM upload_sessions s
                 WHERE s.bucket = \(spot.bucket) AND s.spot_id = \(spot.id) AND s.expires_at > \(now) AND s.name <> \(name)
                   AND (\(uploader)::text IS NULL OR s.owner = \(uploader))
                   AND NOT EXISTS (SELECT 1 FROM objects o WHERE o.bucket = s.bucket AND o.name = s.name)),
                EXISTS (SELECT 1 FROM objects WHERE bucket = \(spot.bucket) AND name = \(name))
            """, logger: logger).collect()
        let (objects, sessions, isReplacement) = try counts.first?.decode((Int, Int, Bool).self) ?? (0, 0, false)
        return (SpotOccupancy(bucket: spot.bucket, id: spot.id, owner: owner, objects: objects, sessions: sessions), isReplacement)
    }

    /// Upserts `photo`; `true` when it was new or changed.
    private static func upsert(_ photo: PhotoRecord, _ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let written = try await connection.query("""
            INSERT INTO photos (\(unescaped: photoColumns))
            VALUES (\(photo.digest), \(photo.width), \(photo.height), \(photo.orientation), \(photo.takenAt), \(photo.cameraMake),
                    \(photo.cameraModel), \(photo.latitude), \(photo.longitude), \(photo.altitude), \(photo.hasPlace), \(photo.city),
                    \(photo.region), \(photo.country), \(photo.countryCode), \(photo.placeDistanceKm))
            ON CONFLICT (digest) DO UPDATE SET (\(unescaped: photoColumns)) = ROW(EXCLUDED.*)
                WHERE (photos.*) IS DISTINCT FROM (EXCLUDED.*)
            RETURNING digest
            """, logger: logger).collect()
        return !written.isEmpty
    }

    /// The object at `path` as stored, or `nil`.
    static func fetchObject(at path: ObjectPath, _ connection: PostgresConnection, logger: Logger) async throws -> StoredObject? {
        try await storedObjects(in: path.bucket, where: "name", isIn: [path.name], connection, logger: logger).first
    }

    /// The objects of `bucket` whose `column` (`name` or `spot_id`) is one of `values`, in
    /// name order, with their blobs' photo details.
    static func storedObjects(
        in bucket: String, where column: StaticString, isIn values: [String], _ connection: PostgresConnection, logger: Logger
    ) async throws -> [StoredObject] {
        var objects = try await connection.query("""
            SELECT \(unescaped: objectColumns) FROM objects WHERE bucket = \(bucket) AND \(unescaped: "\(column)") = ANY(\(values))
            ORDER BY name
            """, logger: logger).collect().map(storedObject)
        let details = try await blobDetails(of: Set(objects.map(\.digest)), connection, logger: logger)
        for index in objects.indices {
            objects[index].photo = details[objects[index].digest]?.photo
            objects[index].thumbnails = details[objects[index].digest]?.thumbnails ?? []
        }
        return objects
    }

    /// The photo metadata, thumbnails (by size) and damage marks of the thumbnails' blobs
    /// recorded for each of `digests` that has any: two queries.
    static func blobDetails(
        of digests: some Collection<Digest>, _ connection: PostgresConnection, logger: Logger
    ) async throws -> [Digest: (photo: PhotoMetadata?, thumbnails: [Thumbnail], thumbnailDamage: [Digest: String])] {
        guard !digests.isEmpty else { return [:] }
        let hexes = digests.map(\.hex)
        var details: [Digest: (photo: PhotoMetadata?, thumbnails: [Thumbnail], thumbnailDamage: [Digest: String])] = [:]
        for row in try await connection.query(
            "SELECT \(unescaped: photoColumns) FROM photos WHERE digest = ANY(\(hexes))", logger: logger
        ).collect() {
            let photo = try photoRecord(row)
            details[try storedDigest(photo.digest)] = (photo.metadata, [], [:])
        }
        for row in try await connection.query("""
            SELECT \(unescaped: thumbnailColumns), digest, (SELECT reason FROM damaged_blobs d WHERE d.digest = thumbnails.thumb_digest)
            FROM thumbnails WHERE digest = ANY(\(hexes)) ORDER BY digest, size, content_type
            """, logger: logger).collect() {
            let thumbnail = try thumbnail(row)
            let digest = try storedDigest(row.decode(String.self, at: 6))
            let damage = try row.decode(String?.self, at: 7)
            details[digest, default: (nil, [], [:])].thumbnails.append(thumbnail)
            if let damage { details[digest, default: (nil, [], [:])].thumbnailDamage[thumbnail.digest] = damage }
        }
        return details
    }
}

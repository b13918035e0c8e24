import Foundation
import SpotCore

extension SQLCatalog {
    /// One statement, no transaction.
    public func spot(bucket: String, id: String) async throws -> SpotState? {
        try Self.spotState(try await database.query(Self.spotStateQuery(bucket: bucket, id: id)).first, bucket: bucket, id: id)
    }

    /// The row and its blob's details need not be one snapshot.
    public func object(at path: ObjectPath) async throws -> StoredObject? {
        try await readCommitted { transaction in try await Self.fetchObject(at: path, transaction) }
    }

    /// Kept while the change feed's stamp stays the same; the object's own damage mark
    /// comes with its row.
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
        SELECT owner, hides_location, object_count FROM spots WHERE bucket = \(bucket) AND id = \(id)
        """
    }

    /// The spot state in the row `spotStateQuery` gave, or `nil` without one.
    static func spotState(_ row: SQLRow?, bucket: String, id: String) throws -> SpotState? {
        guard let row else { return nil }
        return SpotState(bucket: bucket, id: id, owner: try row(0), objectCount: try row(2), hidesLocation: try row(1))
    }

    /// One statement (no transaction) per 500 digests.
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

    public func photoDetails(of digest: Digest) async throws -> (photo: PhotoMetadata, thumbnails: [Thumbnail])? {
        let details = try await read { transaction in try await Self.blobDetails(of: [digest], transaction)[digest] }
        guard let photo = details?.photo else { return nil }
        return (photo, details?.thumbnails ?? [])
    }

    /// Commits and session starts into one spot, from any connection or process, take
    /// turns on the spot's admission lock. A replacement keeps the object's id and
    /// `createdAt`. The spot's count and location change as the object does
    /// (`derivedLocation`), at a cost that does not grow with the spot; every other spot
    /// showing the same bytes gets its location refreshed when their photo metadata changed.
    public func commit(_ object: NewObject, admission: SpotAdmission) async throws -> StoredObject {
        let now = clock()
        return try await write { transaction in
            let (bucket, name, digest) = (object.path.bucket, object.path.name, object.digest.hex)
            let spotKey = object.path.topFolder.map { SpotKey(bucket: bucket, id: $0) }
            // What concerns the bytes alone (the small blob, damage marks, the lease, photo
            // metadata and thumbnails) comes before the spot's lock, which every commit into
            // the spot waits for: it is held for as short a time as can be.
            if let bytes = object.smallBlob {
                // Under the bytes' lock, as a lease takes it (`lease`).
                guard try await !Self.lockBlobsSeeingRemoval([digest], at: now, transaction) else {
                    throw SpotError(.unavailable, "gc is removing a blob with the bytes this upload has; send it again")
                }
                try await TieredBlobStore<Database>.insert(bytes, as: object.digest, transaction)
            }
            try await transaction.run("DELETE FROM damaged_blobs WHERE digest \(oneOf: [digest] + object.thumbnails.map(\.digest.hex))")
            if let lease = object.lease { try await Self.release(heldLease: lease, transaction) }
            // A photo new or changed may move every spot showing these bytes.
            let photoChanged = if let photo = object.photo {
                try await !transaction.rows("""
                    INSERT INTO photos (\(unescaped: photoColumns)) VALUES (\(photoValues(photo, of: object.digest)))
                    ON CONFLICT (digest) DO UPDATE SET \(unescaped: photoUpsert.set) WHERE \(unescaped: photoUpsert.changed)
                    RETURNING digest
                    """).isEmpty
            } else { false }
            for thumbnail in object.thumbnails {
                try await transaction.run("""
                    INSERT INTO thumbnails (digest, \(unescaped: thumbnailColumns))
                    VALUES (\(digest), \(thumbnail.size), \(thumbnail.digest.hex), \(thumbnail.width), \(thumbnail.height),
                            \(thumbnail.byteCount), \(thumbnail.contentType))
                    ON CONFLICT (digest, size, content_type) DO UPDATE SET thumb_digest = excluded.thumb_digest, width = excluded.width,
                        height = excluded.height, byte_count = excluded.byte_count
                    """)
            }
            let details = try await Self.blobDetails(of: [object.digest], transaction)[object.digest]
            if object.downloadTokenDigest != nil {
                // Held until the commit ends: a revocation waits, then replaces this token too.
                let epoch = try await transaction.value(
                    "SELECT download_token_epoch FROM users WHERE uid = \(object.owner)" + .forShare, as: Int.self) ?? 0
                guard epoch == object.downloadTokenEpoch else {
                    throw SpotError(.unavailable, "the owner's download tokens were replaced while this upload ran; send it again")
                }
            }
            if let spotKey { try await transaction.lock([spotKey.admissionLock]) }
            if let session = object.uploadSession {
                guard let owner = try await transaction.value("DELETE FROM upload_sessions WHERE id = \(session) RETURNING owner", as: String.self)
                else { throw SpotError.uploadSessionGone }
                // The latest commit of an id wins.
                try await transaction.run("""
                    INSERT INTO finished_uploads (id, owner, bucket, name, generation, size, finished_at)
                    VALUES (\(session), \(owner), \(bucket), \(name), \(object.generation), \(object.size), \(now))
                    ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, bucket = excluded.bucket, name = excluded.name,
                        generation = excluded.generation, size = excluded.size, finished_at = excluded.finished_at
                    """)
            }
            var spot: (stored: SpotRecord?, isReplacement: Bool)?
            if let spotKey {
                let admitted = try await Self.admit(object.owner, name: name, into: spotKey, admission: admission, now: now, transaction)
                spot = admitted
                if admitted.stored == nil {
                    try await transaction.run("""
                        INSERT INTO spots (bucket, id, owner, created_at) VALUES (\(bucket), \(spotKey.id), \(object.owner), \(now))
                        ON CONFLICT (bucket, id) DO NOTHING
                        """)
                }
            }
            guard let row = try await transaction.row("""
                INSERT INTO objects (
                    bucket, name, spot_id, digest, size, content_type, owner, created_at, updated_at, md5, settings_json, generation,
                    metageneration, latitude, longitude)
                VALUES (\(bucket), \(name), \(object.path.topFolder), \(digest), \(object.size), \(object.contentType),
                        \(object.owner), \(now), \(now), \(storedHex(md5: object.md5)), \(object.settings.storedJSON), \(object.generation), 1,
                        \(Self.position("latitude", ofDigest: "\(digest)")), \(Self.position("longitude", ofDigest: "\(digest)")))
                ON CONFLICT (bucket, name) DO UPDATE SET digest = excluded.digest, size = excluded.size,
                    content_type = excluded.content_type, owner = excluded.owner, updated_at = excluded.updated_at, md5 = excluded.md5,
                    settings_json = excluded.settings_json, generation = excluded.generation, metageneration = 1,
                    latitude = excluded.latitude, longitude = excluded.longitude
                RETURNING id, latitude, longitude, \(unescaped: objectColumns)
                """)
            else { throw SpotError(.internal, "the catalog wrote object \(object.path) without an id") }
            let objectId: Int64 = try row(0)
            // As it is stored, so the dates are exactly what later reads will see.
            var stored = try storedObject(SQLRow(Array(row.values.dropFirst(3))))
            stored.photo = details?.photo
            stored.thumbnails = details?.thumbnails ?? []
            // A new object in a spot has no tokens to revoke.
            if spot?.isReplacement != false { try await transaction.run("DELETE FROM download_tokens WHERE object_id = \(objectId)") }
            if let token = object.downloadTokenDigest {
                _ = try await Self.insertDownloadToken(token, of: objectId, at: now, transaction)
            }
            var staleSpots: Set<SpotKey> = []
            if photoChanged {
                for row in try await transaction.rows("""
                    UPDATE objects SET \(Self.photoPositions(ofDigest: "\(digest)"))
                    WHERE digest = \(digest) AND id <> \(objectId) RETURNING bucket, spot_id
                    """) {
                    if let id: String = try row(1) { staleSpots.insert(SpotKey(bucket: try row(0), id: id)) }
                }
            }
            if let spotKey, let spot {
                var record = spot.stored ?? SpotRecord(bucket: bucket, id: spotKey.id, owner: object.owner, createdAt: now)
                if !spot.isReplacement { record.objectCount += 1 }
                let position = try (row(1) as Double?).map { GeoPoint(latitude: $0, longitude: try row(2)) }
                let photoMoved = staleSpots.remove(spotKey) != nil
                if position != nil || spot.isReplacement || photoMoved {
                    let change: PositionChange = if let position, !spot.isReplacement, !photoMoved { .added(position) } else { .other }
                    record.setLocation(try await Self.derivedLocation(of: spotKey, kept: spot.stored, change: change, transaction))
                }
                if record != spot.stored { try await transaction.run(record.update) }
            }
            // In key order, so two commits refreshing the same spots lock them in the same order.
            for stale in staleSpots.sorted(by: { ($0.bucket, $0.id) < ($1.bucket, $1.id) }) {
                try await Self.refreshLocation(of: stale, transaction)
            }
            return stored
        }
    }

    /// The expression giving `column` (`latitude` or `longitude`) of the valid position of
    /// the photo of the blob whose digest `digest` gives, `NULL` without one: what an
    /// object of the blob repeats.
    static func position(_ column: StaticString, ofDigest digest: CatalogSQL) -> CatalogSQL {
        "(SELECT photos.\(unescaped: "\(column)") FROM photos WHERE photos.digest = \(digest) AND \(unescaped: photoHasValidPosition))"
    }

    /// The `SET` list giving objects the position (`position(_:ofDigest:)`) of their photo.
    static func photoPositions(ofDigest digest: CatalogSQL) -> CatalogSQL {
        "latitude = \(position("latitude", ofDigest: digest)), longitude = \(position("longitude", ofDigest: digest))"
    }

    /// Holds the object's row (`CatalogSQL.forUpdate`), so a replacement meanwhile is seen.
    public func updateMetadata(
        of path: ObjectPath, generation: Int64, contentType: String, settings: ObjectSettings
    ) async throws -> StoredObject? {
        let now = clock()
        return try await write { transaction in
            guard let current = try await transaction.value(
                "SELECT generation FROM objects WHERE bucket = \(path.bucket) AND name = \(path.name)" + .forUpdate, as: Int64.self)
            else { return nil }
            guard current == generation else {
                throw SpotError(.conflict, "the object \(path) was replaced while its metadata was being changed; read it again and retry")
            }
            try await transaction.run("""
                UPDATE objects SET content_type = \(contentType), settings_json = \(settings.storedJSON),
                    metageneration = metageneration + 1, updated_at = \(now)
                WHERE bucket = \(path.bucket) AND name = \(path.name)
                """)
            return try await Self.fetchObject(at: path, transaction)
        }
    }

    /// Its download tokens go with it (cascade); photo metadata and thumbnails stay for gc.
    /// The spot's row is locked first, as a commit locks it, and its count and location
    /// change only when this removal deleted the row (another may have got there first).
    public func removeObject(at path: ObjectPath) async throws -> StoredObject? {
        try await write { transaction in
            guard let stored = try await Self.fetchObject(at: path, transaction) else { return nil }
            var spot: SpotRecord?
            if let spotId = path.topFolder { spot = try await Self.spotRecord(bucket: path.bucket, id: spotId, lock: true, transaction) }
            guard let removed = try await transaction.row("DELETE FROM objects WHERE bucket = \(path.bucket) AND name = \(path.name) RETURNING latitude")
            else { return nil }
            if var record = spot {
                record.objectCount = max(0, record.objectCount - 1)
                if try (removed(0) as Double?) != nil {
                    record.setLocation(try await Self.derivedLocation(
                        of: SpotKey(bucket: record.bucket, id: record.id), kept: spot, change: .removed, transaction))
                }
                if record != spot { try await transaction.run(record.update) }
            }
            return stored
        }
    }

    /// Throws why `admission` refuses `uploader`'s object or session at `name` into `spot`,
    /// whose admission lock is held; returns the spot's row (locked; `nil` without one)
    /// and whether `name` holds an object.
    ///
    /// The spot holds its objects and the places of its live upload sessions: the distinct
    /// names other than `name` that a session expiring after `now` is uploading and no
    /// object has (a session replacing an object holds no place). Where the admission
    /// requires ownership only the uploader's own sessions count: another user's could
    /// never commit into a spot the uploader owns, so they cannot hold an unclaimed spot's
    /// places against its first uploader. A spot without a row is owned by nobody yet, so
    /// ownership cannot refuse.
    static func admit(
        _ uploader: String, name: String, into spot: SpotKey, admission: SpotAdmission, now: Date, _ transaction: any CatalogTransaction
    ) async throws -> (stored: SpotRecord?, isReplacement: Bool) {
        let counted: String? = admission.requiresOwnership ? uploader : nil
        let countsColumns: CatalogSQL = """
            (SELECT COUNT(DISTINCT s.name) FROM upload_sessions s
                WHERE s.bucket = \(spot.bucket) AND s.spot_id = \(spot.id) AND s.expires_at > \(now) AND s.name <> \(name)
                  AND (CAST(\(counted) AS TEXT) IS NULL OR s.owner = \(counted))
                  AND NOT EXISTS (SELECT 1 FROM objects o WHERE o.bucket = s.bucket AND o.name = s.name)),
            EXISTS (SELECT 1 FROM objects WHERE bucket = \(spot.bucket) AND name = \(name))
            """
        // The spot's row, locked, with the counts in one statement; the counts alone without a row.
        let record: SpotRecord?, counts: SQLRow
        if let row = try await transaction.row(
            "SELECT \(unescaped: spotColumns), " + countsColumns + " FROM spots WHERE bucket = \(spot.bucket) AND id = \(spot.id)" + .forUpdate) {
            (record, counts) = (try SpotRecord(row), SQLRow(Array(row.values.suffix(2))))
        } else {
            guard let row = try await transaction.row("SELECT " + countsColumns) else {
                throw SpotError(.internal, "the catalog did not count spot \(spot.bucket)/\(spot.id)")
            }
            (record, counts) = (nil, row)
        }
        let isReplacement: Bool = try counts(1)
        let state = SpotState(
            bucket: spot.bucket, id: spot.id, owner: record?.owner ?? uploader, objectCount: (record?.objectCount ?? 0) + (try counts(0)))
        if let refusal = admission.refusal(of: uploader, into: state, isReplacement: isReplacement) { throw refusal }
        return (record, isReplacement)
    }

    /// The object at `path` as stored, or `nil`.
    static func fetchObject(at path: ObjectPath, _ transaction: any CatalogTransaction) async throws -> StoredObject? {
        try await storedObjects(in: path.bucket, named: [path.name], transaction).first
    }

    /// The objects of `bucket` named `names`, in name order, with their blobs' photo details.
    static func storedObjects(in bucket: String, named names: [String], _ transaction: any CatalogTransaction) async throws -> [StoredObject] {
        try await storedObjects("SELECT \(unescaped: objectColumns) FROM objects WHERE bucket = \(bucket) AND name \(oneOf: names) ORDER BY name", transaction)
    }

    /// The objects `query` gives (rows of `objectColumns`), with their blobs' photo details.
    static func storedObjects(_ query: CatalogSQL, _ transaction: any CatalogTransaction) async throws -> [StoredObject] {
        var objects = try await transaction.rows(query).map(storedObject)
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
            let (digest, metadata) = try photo(row)
            details[digest] = (metadata, [], [:])
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

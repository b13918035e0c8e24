import Foundation
import GRDB
import CatalogPlanning
import SpotCore

extension SQLiteCatalog {
    /// The spot `id` in `bucket` with its owner and current object count, or `nil` when no
    /// object was ever committed in it.
    ///
    /// A spot whose objects were all removed is still there, with a count of 0, and keeps its owner.
    public func spot(bucket: String, id: String) async throws -> SpotState? {
        try readNow { db in try Self.spotState(bucket: bucket, id: id, db) }
    }

    /// The object at `path`, with the photo metadata and thumbnails of its blob, or `nil`.
    public func object(at path: ObjectPath) async throws -> StoredObject? {
        try readNow { db in try Self.fetchObject(at: path, db) }
    }

    /// The object, its spot and the damage marks of its blobs in one read transaction; the
    /// marks come with the object and thumbnail rows (no query of their own).
    public func objectForReading(at path: ObjectPath) async throws -> ObjectReading {
        guard let memo else { return try readObjectForReading(at: path) }
        return try await memo.objectForReading(at: path) { try readObjectForReading(at: path) }
    }

    private func readObjectForReading(at path: ObjectPath) throws -> ObjectReading {
        try readNow { db in
            let spot = try path.topFolder.flatMap { try Self.spotState(bucket: path.bucket, id: $0, db) }
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT objects.*, (SELECT reason FROM damagedBlobs WHERE damagedBlobs.digest = objects.digest) AS damage
                FROM objects WHERE bucket = ? AND name = ?
                """), arguments: [path.bucket, path.name])
            else { return ObjectReading(object: nil, spot: spot) }
            // Read by hand, and the row's path is `path` (equal bytes): no Codable decoding,
            // no second validation of the path.
            let hex: String = row["digest"]
            let digest = try storedDigest(hex)
            let details = try Self.blobDetails(ofOne: hex, db)
            var damage = details.thumbnailDamage
            if let reason: String = row["damage"] { damage[digest] = reason }
            var object = StoredObject(
                path: path, digest: digest, size: row["size"], contentType: row["contentType"], owner: row["owner"],
                createdAt: row["createdAt"], updatedAt: row["updatedAt"], photo: details.photo, thumbnails: details.thumbnails)
            try object.setStoredFields(
                md5: row["md5"], settingsJSON: row["settingsJson"], generation: row["generation"], metageneration: row["metageneration"])
            return ObjectReading(object: object, spot: spot, damage: damage)
        }
    }

    /// The spot's owner, privacy and object count, or `nil` when it has no row.
    static func spotState(bucket: String, id: String, _ db: Database) throws -> SpotState? {
        guard let spot = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT owner, hidesLocation FROM spots WHERE bucket = ? AND id = ?"), arguments: [bucket, id])
        else { return nil }
        let count = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT COUNT(*) FROM objects WHERE bucket = ? AND spotId = ?"), arguments: [bucket, id]) ?? 0
        return SpotState(bucket: bucket, id: id, owner: spot["owner"], objectCount: count, hidesLocation: spot["hidesLocation"])
    }

    /// For each of `digests` that `owner` already stores in `bucket`, the names holding it,
    /// in name order; digests without such an object are absent. One query per 500 digests.
    public func names(ofDigests digests: [Digest], ownedBy owner: String, in bucket: String) async throws -> [Digest: [String]] {
        try readNow { db in
            var names: [Digest: [String]] = [:]
            let distinct = Array(Set(digests.map(\.hex)))
            for start in stride(from: 0, to: distinct.count, by: 500) {
                let batch = Array(distinct[start..<min(start + 500, distinct.count)])
                let rows = try Row.fetchAll(db, sql: """
                    SELECT digest, name FROM objects WHERE bucket = ? AND owner = ? AND digest IN (\(batch.map { _ in "?" }.joined(separator: ",")))
                    ORDER BY name
                    """, arguments: StatementArguments([bucket, owner] + batch))
                for row in rows {
                    guard let digest = Digest(hex: row["digest"]) else { continue }
                    names[digest, default: []].append(row["name"])
                }
            }
            return names
        }
    }

    /// Photo metadata and thumbnails (by size) already known for a blob, or `nil` when the
    /// blob has no photo metadata (thumbnails alone are not reported).
    public func photoDetails(of digest: Digest) async throws -> (photo: PhotoMetadata, thumbnails: [Thumbnail])? {
        try readNow { db in
            let details = try Self.blobDetails(of: [digest.hex], db)[digest.hex]
            guard let photo = details?.photo else { return nil }
            return (photo, details?.thumbnails ?? [])
        }
    }

    /// Writes `object` in one transaction, replacing an object at the same path, and returns it as stored.
    ///
    /// A replacement keeps the object's `createdAt`, sets `updatedAt`, takes the new
    /// digest, size, content type, owner, MD5, settings and generation (metageneration 1),
    /// and loses its download tokens; then `object.downloadTokenDigest` is recorded. The
    /// upload session `object.uploadSession` completes is removed (`.notFound` when it is
    /// gone) and recorded as finished (`finishedUpload(_:)`). When `object.path` has a
    /// `topFolder`, the spot is that folder: `admission`
    /// decides on it as the transaction sees it (the write lock is held from the start:
    /// IMMEDIATE), counting the places its other live upload sessions hold (`SpotOccupancy`), and it is
    /// created owned by `object.owner` if absent. Photo metadata and thumbnails
    /// are upserted per blob digest; thumbnails of other sizes already recorded for the
    /// digest stay. In the same transaction: the lease is checked and released, damage
    /// marks of the stored blobs are cleared, and the derived location of the object's
    /// spot is brought up to date, and so is that of every spot showing the same bytes
    /// when their photo metadata changed.
    public func commit(_ object: NewObject, admission: SpotAdmission) async throws -> StoredObject {
        try await write { db in
            let now = Date()
            let existing = try ObjectRecord.fetchOne(db, key: ObjectRecord.key(object.path))
            if let session = object.uploadSession {
                guard let record = try UploadSessionRecord.fetchOne(db, key: session) else { throw SpotError.uploadSessionGone }
                try record.delete(db)
                try FinishedUploadRecord(session: session, owner: record.owner, committed: object, at: now).upsert(db)
            }
            if let spotId = object.path.topFolder {
                try Self.admit(object, toSpot: spotId, admission: admission, isReplacement: existing != nil, at: now, db)
            }
            if let lease = object.lease { try Self.release(heldLease: lease, db) }
            for digest in [object.digest] + object.thumbnails.map(\.digest) {
                try DamagedBlobRecord.deleteOne(db, key: digest.hex)
            }
            var record = existing ?? ObjectRecord(object, at: now)
            if existing != nil {
                record.setContent(of: object, at: now)
                try record.update(db)
                try DownloadTokenRecord.filter(Column("objectId") == record.id).deleteAll(db)
            } else {
                try record.insert(db)
            }
            if let token = object.downloadTokenDigest, let objectId = record.id {
                try Self.insertDownloadToken(token, of: objectId, at: now, db)
            }
            var staleSpots: Set<SpotKey> = []
            if let spotId = object.path.topFolder { staleSpots.insert(SpotKey(bucket: object.path.bucket, id: spotId)) }
            if let photo = object.photo {
                let record = PhotoRecord(digest: object.digest, photo)
                if try PhotoRecord.fetchOne(db, key: record.digest) != record {
                    try record.upsert(db)
                    // Every spot showing these bytes may have a new location.
                    staleSpots.formUnion(try Self.spotsHolding(digest: object.digest, db))
                }
            }
            for thumbnail in object.thumbnails {
                try ThumbnailRecord(of: object.digest, thumbnail).upsert(db)
            }
            for spot in staleSpots {
                try Self.refreshLocation(of: spot, db)
            }
            // Read back, so the dates are exactly what later reads will see.
            guard let stored = try Self.fetchObject(at: object.path, db) else {
                throw SpotError(.internal, "object \(object.path) vanished while it was being committed")
            }
            return stored
        }
    }

    /// Replaces the content type and settings of the object at `path`, adds one to its
    /// metageneration and sets `updatedAt`, in one transaction; `nil` when absent.
    /// - Throws: `.conflict` when the object's generation is no longer `generation`.
    public func updateMetadata(
        of path: ObjectPath, generation: Int64, contentType: String, settings: ObjectSettings
    ) async throws -> StoredObject? {
        try await write { db in
            guard var record = try ObjectRecord.fetchOne(db, key: ObjectRecord.key(path)) else { return nil }
            guard record.generation == generation else { throw SpotError.replacedDuringMetadataUpdate(of: path) }
            record.contentType = contentType
            record.settingsJson = settings.storedJSON
            record.metageneration += 1
            record.updatedAt = Date()
            try record.update(db)
            return try Self.fetchObject(at: path, db)
        }
    }

    /// Removes the object at `path` and returns it, or `nil` when absent.
    ///
    /// Its download tokens go with it (cascade). Its blob, photo metadata and thumbnails
    /// stay for garbage collection; its spot stays
    /// with its owner and overrides, its derived location brought up to date in the same
    /// transaction.
    public func removeObject(at path: ObjectPath) async throws -> StoredObject? {
        try await write { db in
            guard let stored = try Self.fetchObject(at: path, db) else { return nil }
            try ObjectRecord.deleteOne(db, key: ObjectRecord.key(path))
            if let spotId = path.topFolder {
                try Self.refreshLocation(of: SpotKey(bucket: path.bucket, id: spotId), db)
            }
            return stored
        }
    }

    /// Lets `object` into spot `spotId`, creating the spot if absent, or throws why not.
    /// Its upload session, if any, was removed already, so it does not count; nor do
    /// sessions of its own name (it takes that place itself) or sessions expired by `now`.
    private static func admit(
        _ object: NewObject, toSpot spotId: String, admission: SpotAdmission, isReplacement: Bool, at now: Date, _ db: Database
    ) throws {
        let bucket = object.path.bucket
        let occupancy = try occupancy(
            of: SpotKey(bucket: bucket, id: spotId), admitting: object.path.name, by: SpotOccupancy.counted(object.owner, admission),
            now: now, db)
        if let refusal = occupancy.refusal(of: object.owner, admission: admission, isReplacement: isReplacement) { throw refusal }
        if occupancy.owner == nil {
            try SpotRecord(bucket: bucket, id: spotId, owner: object.owner, createdAt: now).insert(db)
        }
    }

    /// The owner (`nil` without a row), objects and upload sessions' places of `spot`, as
    /// admission counts them for `name` at `now` (see `SpotOccupancy`): the distinct names
    /// other than `name` that a session expiring after `now` is uploading and no object has.
    static func occupancy(of spot: SpotKey, admitting name: String, by uploader: String?, now: Date, _ db: Database) throws -> SpotOccupancy {
        let owner = try String.fetchOne(
            db.cachedStatement(sql: "SELECT owner FROM spots WHERE bucket = ? AND id = ?"), arguments: [spot.bucket, spot.id])
        let counts = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT (SELECT COUNT(*) FROM objects WHERE bucket = ?1 AND spotId = ?2) AS objects,
                (SELECT COUNT(DISTINCT name) FROM uploadSessions AS session
                 WHERE bucket = ?1 AND spotId = ?2 AND expiresAt > ?3 AND name <> ?4 AND (?5 IS NULL OR owner = ?5)
                   AND NOT EXISTS (SELECT 1 FROM objects WHERE objects.bucket = ?1 AND objects.name = session.name)) AS sessions
            """), arguments: [spot.bucket, spot.id, now, name, uploader])
        return SpotOccupancy(
            bucket: spot.bucket, id: spot.id, owner: owner, objects: counts?["objects"] ?? 0, sessions: counts?["sessions"] ?? 0)
    }

    /// The object at `path` as stored, or `nil`.
    static func fetchObject(at path: ObjectPath, _ db: Database) throws -> StoredObject? {
        guard let record = try ObjectRecord.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM objects WHERE bucket = ? AND name = ?"), arguments: [path.bucket, path.name])
        else { return nil }
        let details = try blobDetails(ofOne: record.digest, db)
        return try record.storedObject(photo: details.photo, thumbnails: details.thumbnails)
    }

    /// The domain values of `records`, in the same order, with their blobs' photo details.
    static func storedObjects(_ records: [ObjectRecord], _ db: Database) throws -> [StoredObject] {
        let details = try blobDetails(of: Set(records.map(\.digest)), db)
        return try records.map { record in
            let blob = details[record.digest]
            return try record.storedObject(photo: blob?.photo, thumbnails: blob?.thumbnails ?? [])
        }
    }

    /// The photo metadata and thumbnails (by size) recorded for each of `digests` that has any.
    private static func blobDetails(
        of digests: Set<String>, _ db: Database
    ) throws -> [String: (photo: PhotoMetadata?, thumbnails: [Thumbnail])] {
        guard !digests.isEmpty else { return [:] }
        var details: [String: (photo: PhotoMetadata?, thumbnails: [Thumbnail])] = [:]
        for photo in try PhotoRecord.filter(try Column("digest").isIn(digests)).fetchAll(db) {
            details[photo.digest] = (photo.metadata, [])
        }
        let thumbnails = try ThumbnailRecord
            .filter(try Column("digest").isIn(digests))
            .order(Column("digest"), Column("size"), Column("contentType"))
            .fetchAll(db)
        for thumbnail in thumbnails {
            details[thumbnail.digest, default: (nil, [])].thumbnails.append(try thumbnail.thumbnail())
        }
        return details
    }

    /// The photo metadata, thumbnails (by size) and damage marks of the thumbnails' blobs of
    /// one blob, with cached statements: every read of an object asks this.
    private static func blobDetails(
        ofOne digest: String, _ db: Database
    ) throws -> (photo: PhotoMetadata?, thumbnails: [Thumbnail], thumbnailDamage: [Digest: String]) {
        let photo = try PhotoRecord.fetchOne(db.cachedStatement(sql: "SELECT * FROM photos WHERE digest = ?"), arguments: [digest])
        var thumbnails: [Thumbnail] = []
        var damage: [Digest: String] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT thumbnails.*, (SELECT reason FROM damagedBlobs WHERE damagedBlobs.digest = thumbnails.thumbDigest) AS damage
            FROM thumbnails WHERE digest = ? ORDER BY size, contentType
            """), arguments: [digest])
        while let row = try rows.next() {
            let thumbnail = Thumbnail(
                size: row["size"], digest: try storedDigest(row["thumbDigest"]), width: row["width"], height: row["height"],
                byteCount: row["byteCount"], contentType: row["contentType"])
            thumbnails.append(thumbnail)
            if let reason: String = row["damage"] { damage[thumbnail.digest] = reason }
        }
        return (photo?.metadata, thumbnails, damage)
    }
}

import Foundation
import GRDB
import SQLCatalog
import SpotCore

extension SQLiteDatabase {
    /// The schema, one migration per shipped version. A shipped migration never changes:
    /// add a new one instead.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createSchemaV1)
        migrator.registerMigration("v2", migrate: addPlacesV2)
        migrator.registerMigration("v3", migrate: addRulesAndSharingV3)
        migrator.registerMigration("v4", migrate: addDamagedBlobsV4)
        migrator.registerMigration("v5", migrate: addLeasesV5)
        migrator.registerMigration("v6", migrate: keyThumbnailsByContentTypeV6)
        migrator.registerMigration("v7", migrate: addSignInsV7)
        migrator.registerMigration("v8", migrate: addUploadSessionsV8)
        migrator.registerMigration("v9", migrate: addFinishedUploadsV9)
        migrator.registerMigration("v10", migrate: keepChunksOutOfBlobsV10)
        migrator.registerMigration("v11", migrate: addDownloadTokenEpochsV11)
        migrator.registerMigration("v12", migrate: forgetLocationFreeCopiesV12)
        migrator.registerMigration("v13", migrate: spellColumnsAsPostgresDoesV13)
        migrator.registerMigration("v14", migrate: { db in try db.execute(sql: keepSpotStateV14) })
        migrator.registerMigration("v15", migrate: { db in try db.execute(sql: addSmallBlobsV15) })
        migrator.registerMigration("v16", migrate: { db in try db.execute(sql: addBrowserSecretsV16) })
        return migrator
    }

    /// Users and their token digests, spots, objects, and per-blob photo metadata and thumbnails.
    private static func createSchemaV1(_ db: Database) throws {
        try db.create(table: "users") { t in
            t.primaryKey("uid", .text)
            t.column("createdAt", .datetime).notNull()
        }
        try db.create(table: "tokens") { t in
            t.primaryKey("digest", .text)
            t.column("uid", .text).notNull().indexed()
                .references("users", onDelete: .cascade)
            t.column("createdAt", .datetime).notNull()
        }
        // A spot row exists once an object was stored in the spot under a count limit; it
        // records the owner and outlives the spot's objects.
        try db.create(table: "spots") { t in
            t.column("bucket", .text).notNull()
            t.column("id", .text).notNull()
            t.column("owner", .text).notNull()
            t.column("createdAt", .datetime).notNull()
            t.primaryKey(["bucket", "id"])
        }
        // Names compare with BINARY (byte order of UTF-8), which listing relies on.
        try db.create(table: "objects") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("bucket", .text).notNull()
            t.column("name", .text).notNull().collate(.binary)
            t.column("spotId", .text)
            t.column("digest", .text).notNull()
            t.column("size", .integer).notNull()
            t.column("contentType", .text).notNull()
            t.column("owner", .text).notNull()
            t.column("createdAt", .datetime).notNull()
            t.column("updatedAt", .datetime).notNull()
            t.uniqueKey(["bucket", "name"])
        }
        try db.create(index: "objects_on_bucket_spotId", on: "objects", columns: ["bucket", "spotId"])
        try db.create(index: "objects_on_digest", on: "objects", columns: ["digest"])
        try db.create(table: "photos") { t in
            t.primaryKey("digest", .text)
            t.column("width", .integer).notNull()
            t.column("height", .integer).notNull()
            t.column("orientation", .integer).notNull()
            t.column("takenAt", .text)
            t.column("cameraMake", .text)
            t.column("cameraModel", .text)
            t.column("latitude", .double)
            t.column("longitude", .double)
            t.column("altitude", .double)
        }
        try db.create(table: "thumbnails") { t in
            t.column("digest", .text).notNull()
            t.column("size", .integer).notNull()
            t.column("thumbDigest", .text).notNull().indexed()
            t.column("width", .integer).notNull()
            t.column("height", .integer).notNull()
            t.column("byteCount", .integer).notNull()
            t.column("contentType", .text).notNull()
            t.primaryKey(["digest", "size"])
        }
    }

    /// Places for photos; for spots the owner's overrides and the location derived from
    /// their photos, indexed for search by city and by position; existing spots get their
    /// derived location.
    ///
    /// Shipped: never change this, nor what it calls in this file.
    private static func addPlacesV2(_ db: Database) throws {
        try db.alter(table: "photos") { t in
            addPlaceColumnsV2(t)
        }
        try db.alter(table: "spots") { t in
            t.add(column: "name", .text)
            t.add(column: "description", .text)
            t.add(column: "cityOverride", .text)
            t.add(column: "latitude", .double)
            t.add(column: "longitude", .double)
            t.add(column: "altitude", .double)
            addPlaceColumnsV2(t)
            // cityKey(cityOverride ?? city), NULL without a city.
            t.add(column: "cityKey", .text)
            t.add(column: "scattered", .boolean).notNull().defaults(to: false)
        }
        try db.create(index: "spots_on_bucket_cityKey_id", on: "spots", columns: ["bucket", "cityKey", "id"])
        try db.create(index: "spots_on_bucket_latitude_longitude_id", on: "spots", columns: ["bucket", "latitude", "longitude", "id"])
        try backfillSpotLocationsV2(db)
    }

    /// A place in flat columns: `hasPlace` tells a place with no field set (open ocean) from none.
    private static func addPlaceColumnsV2(_ t: TableAlteration) {
        t.add(column: "hasPlace", .boolean).notNull().defaults(to: false)
        t.add(column: "city", .text)
        t.add(column: "region", .text)
        t.add(column: "country", .text)
        t.add(column: "countryCode", .text)
        t.add(column: "placeDistanceKm", .double)
    }

    /// Derives the location of every existing spot from its photos. No photo has a place
    /// yet, so neither does any spot, and no spot has a city key.
    private static func backfillSpotLocationsV2(_ db: Database) throws {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT spots.bucket, spots.id, photos.latitude, photos.longitude, photos.altitude
            FROM spots
            JOIN objects ON objects.bucket = spots.bucket AND objects.spotId = spots.id
            JOIN photos ON photos.digest = objects.digest
            WHERE photos.latitude IS NOT NULL AND photos.longitude IS NOT NULL
            ORDER BY spots.bucket, spots.id, objects.createdAt, objects.name
            """)
        var photosBySpot: [SpotKey: [(location: GeoPoint?, place: Place?)]] = [:]
        var spots: [SpotKey] = []
        while let row = try rows.next() {
            let spot = SpotKey(bucket: row["bucket"], id: row["id"])
            if photosBySpot[spot] == nil { spots.append(spot) }
            let location = GeoPoint(latitude: row["latitude"], longitude: row["longitude"], altitude: row["altitude"])
            photosBySpot[spot, default: []].append((location, nil))
        }
        for spot in spots {
            guard let derived = SpotLocation(photos: photosBySpot[spot] ?? []) else { continue }
            try db.execute(
                sql: "UPDATE spots SET latitude = ?, longitude = ?, altitude = ?, scattered = ? WHERE bucket = ? AND id = ?",
                arguments: [
                    derived.location.latitude, derived.location.longitude, derived.location.altitude, derived.scattered,
                    spot.bucket, spot.id,
                ])
        }
    }

    /// User claims for the access rules; download tokens (digests only, gone with their
    /// object); spots hiding their position and GPS-free copies of images; and a spot row
    /// for every top folder, owned by the owner of its oldest object.
    ///
    /// Shipped: never change this.
    private static func addRulesAndSharingV3(_ db: Database) throws {
        try db.create(table: "claims") { t in
            t.column("uid", .text).notNull().references("users", onDelete: .cascade)
            t.column("key", .text).notNull()
            t.column("value", .text).notNull()
            t.primaryKey(["uid", "key"])
        }
        try db.create(table: "downloadTokens") { t in
            t.primaryKey("digest", .text)
            t.column("objectId", .integer).notNull().indexed()
                .references("objects", onDelete: .cascade)
            t.column("createdAt", .datetime).notNull()
        }
        try db.alter(table: "spots") { t in
            t.add(column: "hidesLocation", .boolean).notNull().defaults(to: false)
        }
        // Blob digest → the digest of the same image without GPS, made on first need.
        try db.create(table: "locationFreeBlobs") { t in
            t.primaryKey("digest", .text)
            t.column("freeDigest", .text).notNull()
        }
        try db.execute(sql: """
            INSERT INTO spots (bucket, id, owner, createdAt)
            SELECT o.bucket, o.spotId, o.owner, o.createdAt FROM objects o
            WHERE o.spotId IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM spots s WHERE s.bucket = o.bucket AND s.id = o.spotId)
              AND o.id = (SELECT o2.id FROM objects o2 WHERE o2.bucket = o.bucket AND o2.spotId = o.spotId
                          ORDER BY o2.createdAt, o2.id LIMIT 1)
            """)
        let newSpots = try Row.fetchAll(db, sql: "SELECT bucket, id FROM spots WHERE latitude IS NULL")
        for row in newSpots {
            try deriveLocationV3(of: SpotKey(bucket: row["bucket"], id: row["id"]), db)
        }
    }

    /// Sets the location spot `spot` (without an override) takes from its objects' photos:
    /// the first by creation time, then name, with a position; its place; whether another
    /// is more than 1 km away; and the city key.
    private static func deriveLocationV3(of spot: SpotKey, _ db: Database) throws {
        let photos = try Row.fetchAll(db, sql: """
            SELECT photos.* FROM objects JOIN photos ON photos.digest = objects.digest
            WHERE objects.bucket = ? AND objects.spotId = ? AND photos.latitude IS NOT NULL AND photos.longitude IS NOT NULL
            ORDER BY objects.createdAt, objects.name
            """, arguments: [spot.bucket, spot.id])
        let located = photos.map { row -> (location: GeoPoint?, place: Place?) in
            let place: Place? = row["hasPlace"] ? Place(
                city: row["city"], region: row["region"], country: row["country"], countryCode: row["countryCode"],
                distanceKm: row["placeDistanceKm"]) : nil
            return (GeoPoint(latitude: row["latitude"], longitude: row["longitude"], altitude: row["altitude"]), place)
        }
        var record = SpotRecord(bucket: spot.bucket, id: spot.id, owner: "", createdAt: Date())
        record.setLocation(SpotLocation(photos: located))
        let (location, place) = (record.location, record.place)
        try db.execute(sql: """
            UPDATE spots SET latitude = ?, longitude = ?, altitude = ?, hasPlace = ?, city = ?, region = ?, country = ?,
                countryCode = ?, placeDistanceKm = ?, cityKey = ?, scattered = ?
            WHERE bucket = ? AND id = ?
            """, arguments: [
                location?.latitude, location?.longitude, location?.altitude, place != nil, place?.city, place?.region, place?.country,
                place?.countryCode, place?.distanceKm, record.cityKey, record.scattered, spot.bucket, spot.id,
            ])
    }

    /// Thumbnails keyed by content type too, so that a blob can have a WebP thumbnail of
    /// each size besides the standard (JPEG or PNG) one. SQLite cannot change a primary
    /// key: the table is made anew and its rows copied.
    ///
    /// Shipped: never change this.
    private static func keyThumbnailsByContentTypeV6(_ db: Database) throws {
        try db.create(table: "newThumbnails") { t in
            t.column("digest", .text).notNull()
            t.column("size", .integer).notNull()
            t.column("thumbDigest", .text).notNull()
            t.column("width", .integer).notNull()
            t.column("height", .integer).notNull()
            t.column("byteCount", .integer).notNull()
            t.column("contentType", .text).notNull()
            t.primaryKey(["digest", "size", "contentType"])
        }
        try db.execute(sql: """
            INSERT INTO newThumbnails (digest, size, thumbDigest, width, height, byteCount, contentType)
            SELECT digest, size, thumbDigest, width, height, byteCount, contentType FROM thumbnails
            """)
        try db.drop(table: "thumbnails")
        try db.rename(table: "newThumbnails", to: "thumbnails")
        try db.create(index: "index_thumbnails_on_thumbDigest", on: "thumbnails", columns: ["thumbDigest"])
    }

    /// Users who sign in with ID tokens: the provider and time of their last sign-in, and
    /// when their tokens were last revoked (ID tokens issued before are refused); the
    /// admin role.
    ///
    /// Shipped: never change this.
    private static func addSignInsV7(_ db: Database) throws {
        try db.alter(table: "users") { t in
            t.add(column: "provider", .text)
            t.add(column: "lastSignInAt", .datetime)
            t.add(column: "revokedAt", .datetime)
            t.add(column: "isAdmin", .boolean).notNull().defaults(to: false)
        }
    }

    /// What Firebase reports of an object besides its bytes: its MD5 (`NULL` for objects
    /// stored before), its settings (JSON, `NULL` when none), its generation (existing
    /// objects get their update time in microseconds) and metageneration (1); and resumable
    /// upload sessions with their chunks, indexed by spot (admission counts them), by
    /// expiry (the sweeper) and by chunk digest (gc).
    ///
    /// Shipped: never change this.
    private static func addUploadSessionsV8(_ db: Database) throws {
        try db.alter(table: "objects") { t in
            t.add(column: "md5", .text)
            t.add(column: "settingsJson", .text)
            t.add(column: "generation", .integer).notNull().defaults(to: 0)
            t.add(column: "metageneration", .integer).notNull().defaults(to: 1)
        }
        // Dates are stored as "YYYY-MM-DD HH:MM:SS.SSS" (UTC): whole seconds, then milliseconds.
        try db.execute(sql: """
            UPDATE objects SET generation = CAST(strftime('%s', updatedAt) AS INTEGER) * 1000000
                + CAST(substr(strftime('%f', updatedAt), 4) AS INTEGER) * 1000
            """)
        try db.create(table: "uploadSessions") { t in
            t.primaryKey("id", .text)
            t.column("bucket", .text).notNull()
            t.column("name", .text).notNull()
            t.column("spotId", .text)
            t.column("owner", .text).notNull()
            t.column("declaredSize", .integer)
            t.column("maxObjects", .integer)
            t.column("requiresOwnership", .boolean).notNull()
            t.column("terms", .text).notNull()
            t.column("createdAt", .datetime).notNull()
            t.column("expiresAt", .datetime).notNull()
        }
        try db.create(index: "uploadSessions_on_bucket_spotId", on: "uploadSessions", columns: ["bucket", "spotId"])
        try db.create(index: "uploadSessions_on_expiresAt", on: "uploadSessions", columns: ["expiresAt"])
        try db.create(table: "uploadChunks") { t in
            t.column("sessionId", .text).notNull().references("uploadSessions", onDelete: .cascade)
            t.column("offset", .integer).notNull()
            t.column("size", .integer).notNull()
            t.column("digest", .text).notNull().indexed()
            t.primaryKey(["sessionId", "offset"])
        }
    }

    /// Upload sessions a commit completed, what a client asking afterwards is told, indexed
    /// by finish time (they are forgotten oldest first).
    ///
    /// Shipped: never change this.
    private static func addFinishedUploadsV9(_ db: Database) throws {
        try db.create(table: "finishedUploads") { t in
            t.primaryKey("id", .text)
            t.column("owner", .text).notNull()
            t.column("bucket", .text).notNull()
            t.column("name", .text).notNull()
            t.column("generation", .integer).notNull()
            t.column("size", .integer).notNull()
            t.column("finishedAt", .datetime).notNull()
        }
        try db.create(index: "finishedUploads_on_finishedAt", on: "finishedUploads", columns: ["finishedAt"])
    }

    /// An upload chunk's `digest` may be null: its bytes are in its session's file, not a
    /// blob. (SQLite cannot drop NOT NULL: the table is made again, rows and all.)
    ///
    /// Shipped: never change this.
    private static func keepChunksOutOfBlobsV10(_ db: Database) throws {
        try db.create(table: "uploadChunksV10") { t in
            t.column("sessionId", .text).notNull().references("uploadSessions", onDelete: .cascade)
            t.column("offset", .integer).notNull()
            t.column("size", .integer).notNull()
            t.column("digest", .text)
            t.primaryKey(["sessionId", "offset"])
        }
        try db.execute(sql: "INSERT INTO uploadChunksV10 (sessionId, offset, size, digest) SELECT sessionId, offset, size, digest FROM uploadChunks")
        try db.drop(table: "uploadChunks")
        try db.rename(table: "uploadChunksV10", to: "uploadChunks")
        try db.create(index: "uploadChunks_on_digest", on: "uploadChunks", columns: ["digest"])
    }

    /// How many times each user's download tokens were replaced (what the token made on
    /// upload is derived from), and objects indexed by owner, to find a user's objects.
    ///
    /// Shipped: never change this.
    private static func addDownloadTokenEpochsV11(_ db: Database) throws {
        try db.alter(table: "users") { t in
            t.add(column: "downloadTokenEpoch", .integer).notNull().defaults(to: 0)
        }
        try db.create(index: "objects_on_owner", on: "objects", columns: ["owner"])
    }

    /// Forgets every location-free copy: those made before XMP and Photoshop resources were
    /// dropped can still hold a position (`geo:lat`, `drone-dji:Latitude`). The next download
    /// by a reader who may not see the position makes a new copy; `gc` removes the old blobs.
    ///
    /// Shipped: never change this.
    private static func forgetLocationFreeCopiesV12(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM locationFreeBlobs")
    }
    /// Blobs marked damaged by `fsck --repair`, by digest. Reads of objects and thumbnails
    /// using a marked blob fail with the reason instead of serving wrong bytes.
    ///
    /// Shipped: never change this.
    private static func addDamagedBlobsV4(_ db: Database) throws {
        try db.create(table: "damagedBlobs") { t in
            t.primaryKey("digest", .text)
            t.column("reason", .text).notNull()
            t.column("markedAt", .datetime).notNull()
        }
    }

    /// Leases on blobs stored before the catalog names them, removal claims of gc, and
    /// settings every instance shares (the URL-signing key).
    ///
    /// Shipped: never change this.
    private static func addLeasesV5(_ db: Database) throws {
        try db.create(table: "leases") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("expiresAt", .datetime).notNull()
        }
        try db.create(table: "leasedBlobs") { t in
            t.column("leaseId", .integer).notNull().references("leases", onDelete: .cascade)
            t.column("digest", .text).notNull().indexed()
        }
        try db.create(index: "leasedBlobs_on_leaseId", on: "leasedBlobs", columns: ["leaseId"])
        try db.create(table: "blobRemovals") { t in
            t.primaryKey("digest", .text)
            t.column("claimedAt", .datetime).notNull()
        }
        try db.create(table: "settings") { t in
            t.primaryKey("name", .text)
            t.column("value", .blob).notNull()
        }
    }

    /// Tables and columns in snake case, as the PostgreSQL catalog spells them, so that one
    /// transaction logic (`SQLCatalog`) runs on both. Index names stay.
    ///
    /// Shipped: never change this.
    private static func spellColumnsAsPostgresDoesV13(_ db: Database) throws {
        let renamed: [(table: String, newName: String?, columns: [String])] = [
            ("users", nil, ["createdAt", "lastSignInAt", "revokedAt", "isAdmin", "downloadTokenEpoch"]),
            ("tokens", nil, ["createdAt"]),
            ("spots", nil, ["createdAt", "cityOverride", "hasPlace", "countryCode", "placeDistanceKm", "cityKey", "hidesLocation"]),
            ("objects", nil, ["spotId", "contentType", "createdAt", "updatedAt", "settingsJson"]),
            ("photos", nil, ["takenAt", "cameraMake", "cameraModel", "hasPlace", "countryCode", "placeDistanceKm"]),
            ("thumbnails", nil, ["thumbDigest", "byteCount", "contentType"]),
            ("downloadTokens", "download_tokens", ["objectId", "createdAt"]),
            ("locationFreeBlobs", "location_free_blobs", ["freeDigest"]),
            ("damagedBlobs", "damaged_blobs", ["markedAt"]),
            ("leases", nil, ["expiresAt"]),
            ("leasedBlobs", "leased_blobs", ["leaseId"]),
            ("blobRemovals", "blob_removals", ["claimedAt"]),
            ("uploadSessions", "upload_sessions", ["spotId", "declaredSize", "maxObjects", "requiresOwnership", "createdAt", "expiresAt"]),
            ("finishedUploads", "finished_uploads", ["finishedAt"]),
            ("uploadChunks", "upload_chunks", ["sessionId"]),
        ]
        for (table, newName, columns) in renamed {
            for column in columns {
                try db.execute(sql: "ALTER TABLE \"\(table)\" RENAME COLUMN \"\(column)\" TO \"\(column.snakeCased)\"")
            }
            if let newName { try db.execute(sql: "ALTER TABLE \"\(table)\" RENAME TO \"\(newName)\"") }
        }
    }

    /// Each spot's object count, and each object's position (its photo's, when valid),
    /// indexed for a spot's first geotagged object and its extremes, so that a commit's
    /// cost does not grow with its spot; each spot's latitude band (`BoundingBox.latitudeBand`),
    /// indexed with its longitude, so that a search near a point reads only the spots near
    /// it; GPS-free copies indexed by their digest, as in PostgreSQL, for `fsck` and `gc`
    /// reading a digest prefix at a time. PostgreSQL's v9.
    ///
    /// Shipped: never change this.
    private static let keepSpotStateV14 = """
        ALTER TABLE spots ADD COLUMN object_count INTEGER NOT NULL DEFAULT 0;
        UPDATE spots SET object_count = (SELECT COUNT(*) FROM objects WHERE objects.bucket = spots.bucket AND objects.spot_id = spots.id);
        ALTER TABLE objects ADD COLUMN latitude DOUBLE;
        ALTER TABLE objects ADD COLUMN longitude DOUBLE;
        UPDATE objects SET latitude = p.latitude, longitude = p.longitude FROM photos p
        WHERE p.digest = objects.digest AND p.latitude BETWEEN -90 AND 90 AND p.longitude BETWEEN -180 AND 180
          AND NOT (p.latitude = 0 AND p.longitude = 0);
        CREATE INDEX objects_on_spot_position_order ON objects (bucket, spot_id, created_at, name) WHERE latitude IS NOT NULL;
        CREATE INDEX objects_on_spot_latitude ON objects (bucket, spot_id, latitude) WHERE latitude IS NOT NULL;
        CREATE INDEX objects_on_spot_longitude ON objects (bucket, spot_id, longitude) WHERE latitude IS NOT NULL;
        ALTER TABLE spots ADD COLUMN latitude_band INTEGER GENERATED ALWAYS AS (CAST((latitude + 90) * 100 AS INTEGER)) VIRTUAL;
        CREATE INDEX spots_on_bucket_latitude_band ON spots (bucket, latitude_band, longitude, latitude, id);
        DROP INDEX spots_on_bucket_latitude_longitude_id;
        CREATE INDEX location_free_blobs_on_free_digest ON location_free_blobs (free_digest);
        """

    /// The bytes of small blobs, kept with the catalog (`TieredBlobStore`). PostgreSQL's v10.
    ///
    /// Shipped: never change this.
    private static let addSmallBlobsV15 = """
        CREATE TABLE small_blobs (digest TEXT NOT NULL PRIMARY KEY, bytes BLOB NOT NULL) WITHOUT ROWID;
        """

    /// Console sessions, one-time sign-in links and spot share links (`BrowserCatalog`), each
    /// gone with its user. PostgreSQL's v11.
    ///
    /// Shipped: never change this.
    private static let addBrowserSecretsV16 = """
        CREATE TABLE browser_sessions (
            digest TEXT NOT NULL PRIMARY KEY, uid TEXT NOT NULL REFERENCES users (uid) ON DELETE CASCADE,
            created_at DATETIME NOT NULL, expires_at DATETIME NOT NULL);
        CREATE INDEX browser_sessions_on_uid ON browser_sessions (uid, expires_at);
        CREATE TABLE sign_in_links (
            digest TEXT NOT NULL PRIMARY KEY, uid TEXT NOT NULL REFERENCES users (uid) ON DELETE CASCADE,
            created_at DATETIME NOT NULL, expires_at DATETIME NOT NULL);
        CREATE INDEX sign_in_links_on_uid ON sign_in_links (uid, expires_at);
        CREATE TABLE spot_shares (
            digest TEXT NOT NULL PRIMARY KEY, bucket TEXT NOT NULL, spot_id TEXT NOT NULL,
            created_by TEXT NOT NULL REFERENCES users (uid) ON DELETE CASCADE,
            created_at DATETIME NOT NULL, expires_at DATETIME NOT NULL);
        CREATE INDEX spot_shares_on_spot ON spot_shares (bucket, spot_id, expires_at);
        CREATE INDEX spot_shares_on_created_by ON spot_shares (created_by);
        """
}

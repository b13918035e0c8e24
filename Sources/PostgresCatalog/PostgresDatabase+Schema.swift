import Logging
import PostgresNIO
import SpotCore

extension PostgresDatabase {
    /// The schema, one migration per shipped version, applied in order; `migrations` records
    /// which ran. A shipped migration never changes: add a new one instead.
    static let migrations: [(version: Int, statements: [String])] = [(1, schemaV1), (2, schemaV2), (3, schemaV3), (4, schemaV4), (5, schemaV5), (6, schemaV6), (7, schemaV7), (8, schemaV8), (9, schemaV9), (10, schemaV10), (11, schemaV11)]

    /// The advisory lock that serializes migrations of servers starting at once.
    static let migrationLock: Int64 = 0x5370_6f74_5374_6f72  // "SpotStor"

    /// Brings the schema up to date in one transaction under `migrationLock`.
    /// - Throws: `SpotError(.internal)` when a newer SpotStore migrated the database.
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS migrations (version bigint PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                logger: logger)
            var applied: Int = 0
            for try await version in try await connection.query("SELECT COALESCE(MAX(version), 0) FROM migrations", logger: logger)
                .decode(Int.self) {
                applied = version
            }
            guard applied <= migrations.last?.version ?? 0 else {
                throw SpotError(.internal, "the catalog's schema is version \(applied), from a newer SpotStore than this one; upgrade spotstore")
            }
            for migration in migrations where migration.version > applied {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO migrations (version) VALUES (\(migration.version))", logger: logger)
            }
        }
    }

    /// Users and their token digests and claims; spots with their overrides and derived
    /// location, indexed for search by city and by position; objects; per-blob photo
    /// metadata, thumbnails, GPS-free copies and damage marks; download tokens; leases and
    /// removal claims; settings every instance shares. The columns of the SQLite catalog in
    /// snake case; digests are 64 lowercase hex characters, times `timestamptz`.
    ///
    /// Shipped: never change this.
    static let schemaV1 = [
        """
        CREATE TABLE users (
            uid text COLLATE "C" PRIMARY KEY,
            created_at timestamptz NOT NULL)
        """,
        """
        CREATE TABLE tokens (
            digest text COLLATE "C" PRIMARY KEY,
            uid text COLLATE "C" NOT NULL REFERENCES users ON DELETE CASCADE,
            created_at timestamptz NOT NULL)
        """,
        "CREATE INDEX tokens_on_uid ON tokens (uid)",
        """
        CREATE TABLE claims (
            uid text COLLATE "C" NOT NULL REFERENCES users ON DELETE CASCADE,
            key text COLLATE "C" NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (uid, key))
        """,
        // A spot row exists once an object was stored in the spot; it records the owner
        // and outlives the spot's objects.
        """
        CREATE TABLE spots (
            bucket text COLLATE "C" NOT NULL,
            id text COLLATE "C" NOT NULL,
            owner text NOT NULL,
            created_at timestamptz NOT NULL,
            name text,
            description text,
            city_override text,
            latitude double precision,
            longitude double precision,
            altitude double precision,
            has_place boolean NOT NULL DEFAULT false,
            city text,
            region text,
            country text,
            country_code text,
            place_distance_km double precision,
            city_key text COLLATE "C",
            scattered boolean NOT NULL DEFAULT false,
            hides_location boolean NOT NULL DEFAULT false,
            PRIMARY KEY (bucket, id))
        """,
        "CREATE INDEX spots_on_bucket_city_key_id ON spots (bucket, city_key, id)",
        "CREATE INDEX spots_on_bucket_latitude_longitude_id ON spots (bucket, latitude, longitude, id)",
        """
        CREATE TABLE objects (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            bucket text COLLATE "C" NOT NULL,
            name text COLLATE "C" NOT NULL,
            spot_id text COLLATE "C",
            digest text COLLATE "C" NOT NULL,
            size bigint NOT NULL,
            content_type text NOT NULL,
            owner text COLLATE "C" NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            UNIQUE (bucket, name))
        """,
        "CREATE INDEX objects_on_bucket_spot_id ON objects (bucket, spot_id)",
        "CREATE INDEX objects_on_digest ON objects (digest)",
        """
        CREATE TABLE photos (
            digest text COLLATE "C" PRIMARY KEY,
            width bigint NOT NULL,
            height bigint NOT NULL,
            orientation bigint NOT NULL,
            taken_at text,
            camera_make text,
            camera_model text,
            latitude double precision,
            longitude double precision,
            altitude double precision,
            has_place boolean NOT NULL DEFAULT false,
            city text,
            region text,
            country text,
            country_code text,
            place_distance_km double precision)
        """,
        """
        CREATE TABLE thumbnails (
            digest text COLLATE "C" NOT NULL,
            size bigint NOT NULL,
            thumb_digest text COLLATE "C" NOT NULL,
            width bigint NOT NULL,
            height bigint NOT NULL,
            byte_count bigint NOT NULL,
            content_type text NOT NULL,
            PRIMARY KEY (digest, size))
        """,
        "CREATE INDEX thumbnails_on_thumb_digest ON thumbnails (thumb_digest)",
        // Oldest first is `seq` order.
        """
        CREATE TABLE download_tokens (
            digest text COLLATE "C" PRIMARY KEY,
            object_id bigint NOT NULL REFERENCES objects ON DELETE CASCADE,
            created_at timestamptz NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY)
        """,
        "CREATE INDEX download_tokens_on_object_id_seq ON download_tokens (object_id, seq)",
        // Blob digest → the digest of the same image without GPS, made on first need.
        """
        CREATE TABLE location_free_blobs (
            digest text COLLATE "C" PRIMARY KEY,
            free_digest text COLLATE "C" NOT NULL)
        """,
        "CREATE INDEX location_free_blobs_on_free_digest ON location_free_blobs (free_digest)",
        """
        CREATE TABLE damaged_blobs (
            digest text COLLATE "C" PRIMARY KEY,
            reason text NOT NULL,
            marked_at timestamptz NOT NULL)
        """,
        """
        CREATE TABLE leases (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            expires_at timestamptz NOT NULL)
        """,
        """
        CREATE TABLE leased_blobs (
            lease_id bigint NOT NULL REFERENCES leases ON DELETE CASCADE,
            digest text COLLATE "C" NOT NULL)
        """,
        "CREATE INDEX leased_blobs_on_digest ON leased_blobs (digest)",
        "CREATE INDEX leased_blobs_on_lease_id ON leased_blobs (lease_id)",
        """
        CREATE TABLE blob_removals (
            digest text COLLATE "C" PRIMARY KEY,
            claimed_at timestamptz NOT NULL)
        """,
        """
        CREATE TABLE settings (
            name text COLLATE "C" PRIMARY KEY,
            value bytea NOT NULL)
        """,
    ]

    /// Thumbnails keyed by content type too, so that a blob can have a WebP thumbnail of
    /// each size besides the standard (JPEG or PNG) one.
    ///
    /// Shipped: never change this.
    static let schemaV2 = [
        "ALTER TABLE thumbnails DROP CONSTRAINT thumbnails_pkey, ADD PRIMARY KEY (digest, size, content_type)",
    ]

    /// Users who sign in with ID tokens: the provider and time of their last sign-in, and
    /// when their tokens were last revoked (ID tokens issued before are refused); the
    /// admin role.
    ///
    /// Shipped: never change this.
    static let schemaV3 = [
        """
        ALTER TABLE users ADD COLUMN provider text, ADD COLUMN last_sign_in_at timestamptz, ADD COLUMN revoked_at timestamptz,
            ADD COLUMN is_admin boolean NOT NULL DEFAULT false
        """,
    ]

    /// What Firebase reports of an object besides its bytes: its MD5 (`NULL` for objects
    /// stored before), its settings (JSON, `NULL` when none), its generation (existing
    /// objects get their update time in microseconds) and metageneration (1); and resumable
    /// upload sessions with their chunks, indexed by spot (admission counts them), by
    /// expiry (the sweeper) and by chunk digest (gc). The SQLite catalog's v8.
    ///
    /// Shipped: never change this.
    static let schemaV4 = [
        """
        ALTER TABLE objects ADD COLUMN md5 text, ADD COLUMN settings_json text, ADD COLUMN generation bigint NOT NULL DEFAULT 0,
            ADD COLUMN metageneration bigint NOT NULL DEFAULT 1
        """,
        "UPDATE objects SET generation = round(EXTRACT(EPOCH FROM updated_at) * 1000000)::bigint",
        """
        CREATE TABLE upload_sessions (
            id text COLLATE "C" PRIMARY KEY,
            bucket text COLLATE "C" NOT NULL,
            name text COLLATE "C" NOT NULL,
            spot_id text COLLATE "C",
            owner text COLLATE "C" NOT NULL,
            declared_size bigint,
            max_objects bigint,
            requires_ownership boolean NOT NULL,
            terms text NOT NULL,
            created_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL)
        """,
        "CREATE INDEX upload_sessions_on_bucket_spot_id ON upload_sessions (bucket, spot_id)",
        "CREATE INDEX upload_sessions_on_expires_at ON upload_sessions (expires_at)",
        """
        CREATE TABLE upload_chunks (
            session_id text COLLATE "C" NOT NULL REFERENCES upload_sessions ON DELETE CASCADE,
            "offset" bigint NOT NULL,
            size bigint NOT NULL,
            digest text COLLATE "C" NOT NULL,
            PRIMARY KEY (session_id, "offset"))
        """,
        "CREATE INDEX upload_chunks_on_digest ON upload_chunks (digest)",
    ]

    /// Upload sessions a commit completed, what a client asking afterwards is told, indexed
    /// by finish time (they are forgotten oldest first). The SQLite catalog's v9.
    ///
    /// Shipped: never change this.
    static let schemaV5 = [
        """
        CREATE TABLE finished_uploads (
            id text COLLATE "C" PRIMARY KEY,
            owner text COLLATE "C" NOT NULL,
            bucket text COLLATE "C" NOT NULL,
            name text COLLATE "C" NOT NULL,
            generation bigint NOT NULL,
            size bigint NOT NULL,
            finished_at timestamptz NOT NULL)
        """,
        "CREATE INDEX finished_uploads_on_finished_at ON finished_uploads (finished_at)",
    ]

    /// An upload chunk's `digest` may be null: its bytes are in its session's file, not a
    /// blob. The SQLite catalog's v10.
    ///
    /// Shipped: never change this.
    static let schemaV6 = [
        "ALTER TABLE upload_chunks ALTER COLUMN digest DROP NOT NULL",
    ]

    /// How many times each user's download tokens were replaced (what the token made on
    /// upload is derived from), and objects indexed by owner, to find a user's objects.
    /// The SQLite catalog's v11.
    ///
    /// Shipped: never change this.
    static let schemaV7 = [
        "ALTER TABLE users ADD COLUMN download_token_epoch bigint NOT NULL DEFAULT 0",
        "CREATE INDEX objects_on_owner ON objects (owner)",
    ]

    /// Forgets every location-free copy: those made before XMP and Photoshop resources were
    /// dropped can still hold a position. The SQLite catalog's v12.
    ///
    /// Shipped: never change this.
    static let schemaV8 = [
        "DELETE FROM location_free_blobs",
    ]

    /// Each spot's object count, and each object's position (its photo's, when valid),
    /// indexed for a spot's first geotagged object and its extremes, so that a commit's
    /// cost does not grow with its spot; each spot's latitude band (`BoundingBox.latitudeBand`),
    /// indexed with its longitude, so that a search near a point reads only the spots near
    /// it. The SQLite catalog's v14.
    ///
    /// Shipped: never change this.
    static let schemaV9 = [
        "ALTER TABLE spots ADD COLUMN object_count bigint NOT NULL DEFAULT 0",
        "UPDATE spots SET object_count = (SELECT COUNT(*) FROM objects WHERE objects.bucket = spots.bucket AND objects.spot_id = spots.id)",
        "ALTER TABLE objects ADD COLUMN latitude double precision, ADD COLUMN longitude double precision",
        """
        UPDATE objects SET latitude = p.latitude, longitude = p.longitude FROM photos p
        WHERE p.digest = objects.digest AND p.latitude BETWEEN -90 AND 90 AND p.longitude BETWEEN -180 AND 180
          AND NOT (p.latitude = 0 AND p.longitude = 0)
        """,
        "CREATE INDEX objects_on_spot_position_order ON objects (bucket, spot_id, created_at, name) WHERE latitude IS NOT NULL",
        "CREATE INDEX objects_on_spot_latitude ON objects (bucket, spot_id, latitude) WHERE latitude IS NOT NULL",
        "CREATE INDEX objects_on_spot_longitude ON objects (bucket, spot_id, longitude) WHERE latitude IS NOT NULL",
        "ALTER TABLE spots ADD COLUMN latitude_band integer GENERATED ALWAYS AS (CAST(floor((latitude + 90) * 100) AS integer)) STORED",
        "CREATE INDEX spots_on_bucket_latitude_band ON spots (bucket, latitude_band, longitude, latitude, id)",
        "DROP INDEX spots_on_bucket_latitude_longitude_id",
    ]

    /// The bytes of small blobs, kept with the catalog (`TieredBlobStore`), out of line
    /// and not compressed again (most are JPEG or WebP thumbnails). The SQLite catalog's v15.
    ///
    /// Shipped: never change this.
    static let schemaV10 = [
        "CREATE TABLE small_blobs (digest text COLLATE \"C\" PRIMARY KEY, bytes bytea NOT NULL)",
        "ALTER TABLE small_blobs ALTER COLUMN bytes SET STORAGE EXTERNAL",
    ]

    /// Console sessions, one-time sign-in links and spot share links (`BrowserCatalog`), each
    /// gone with its user. The SQLite catalog's v16.
    ///
    /// Shipped: never change this.
    static let schemaV11 = [
        """
        CREATE TABLE browser_sessions (
            digest text COLLATE "C" PRIMARY KEY, uid text COLLATE "C" NOT NULL REFERENCES users (uid) ON DELETE CASCADE,
            created_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)
        """,
        "CREATE INDEX browser_sessions_on_uid ON browser_sessions (uid, expires_at)",
        """
        CREATE TABLE sign_in_links (
            digest text COLLATE "C" PRIMARY KEY, uid text COLLATE "C" NOT NULL REFERENCES users (uid) ON DELETE CASCADE,
            created_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)
        """,
        "CREATE INDEX sign_in_links_on_uid ON sign_in_links (uid, expires_at)",
        """
        CREATE TABLE spot_shares (
            digest text COLLATE "C" PRIMARY KEY, bucket text COLLATE "C" NOT NULL, spot_id text COLLATE "C" NOT NULL,
            created_by text COLLATE "C" NOT NULL REFERENCES users (uid) ON DELETE CASCADE,
            created_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)
        """,
        "CREATE INDEX spot_shares_on_spot ON spot_shares (bucket, spot_id, expires_at)",
        "CREATE INDEX spot_shares_on_created_by ON spot_shares (created_by)",
    ]
}

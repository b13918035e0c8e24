import GRDB

extension SQLiteCatalog {
    /// The schema, one migration per shipped version. A shipped migration never changes:
    /// add a new one instead.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createSchemaV1)
        return migrator
    }

    /// Users and their token digests, spots, objects, and per-blob photo metadata and thumbnails.
    private static func createSchemaV1(_ db: Database) throws {
        try db.create(table: UserRecord.databaseTableName) { t in
            t.primaryKey("uid", .text)
            t.column("createdAt", .datetime).notNull()
        }
        try db.create(table: TokenRecord.databaseTableName) { t in
            t.primaryKey("digest", .text)
            t.column("uid", .text).notNull().indexed()
                .references(UserRecord.databaseTableName, onDelete: .cascade)
            t.column("createdAt", .datetime).notNull()
        }
        // A spot row exists once an object was stored in the spot under a count limit; it
        // records the owner and outlives the spot's objects.
        try db.create(table: SpotRecord.databaseTableName) { t in
            t.column("bucket", .text).notNull()
            t.column("id", .text).notNull()
            t.column("owner", .text).notNull()
            t.column("createdAt", .datetime).notNull()
            t.primaryKey(["bucket", "id"])
        }
        // Names compare with BINARY (byte order of UTF-8), which listing relies on.
        try db.create(table: ObjectRecord.databaseTableName) { t in
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
        try db.create(index: "objects_on_bucket_spotId", on: ObjectRecord.databaseTableName, columns: ["bucket", "spotId"])
        try db.create(index: "objects_on_digest", on: ObjectRecord.databaseTableName, columns: ["digest"])
        try db.create(table: PhotoRecord.databaseTableName) { t in
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
        try db.create(table: ThumbnailRecord.databaseTableName) { t in
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
}

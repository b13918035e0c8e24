import CatalogPlanning
import Foundation
import PostgresNIO
import SpotCore

// The rows of the catalog read from and written to PostgreSQL, column lists beside the
// decoding that depends on their order. The row types are CatalogPlanning's, shared with
// the SQLite catalog.

extension PostgresCatalog {
    /// The position and place columns of `spots` and `photos`, in `GeotaggedValues` order.
    static let geotagColumns = "latitude, longitude, altitude, has_place, city, region, country, country_code, place_distance_km"

    /// The values of `geotagColumns`.
    typealias GeotaggedValues = (Double?, Double?, Double?, Bool, String?, String?, String?, String?, Double?)

    /// The columns of `objects` that `storedObject(_:)` decodes.
    static let objectColumns =
        "bucket, name, digest, size, content_type, owner, created_at, updated_at, md5, settings_json, generation, metageneration"

    /// How many columns `objectColumns` names: the index of the first column after them.
    static let objectColumnCount = 12

    /// The columns of `spots` that `spotRecord(_:)` decodes.
    static let spotColumns =
        "bucket, id, owner, created_at, name, description, city_override, \(geotagColumns), city_key, scattered, hides_location"

    /// The columns of `photos` that `photoRecord(_:)` decodes.
    static let photoColumns = "digest, width, height, orientation, taken_at, camera_make, camera_model, \(geotagColumns)"

    /// The columns of `thumbnails` that `thumbnail(_:)` decodes (after the original's digest).
    static let thumbnailColumns = "size, thumb_digest, width, height, byte_count, content_type"

    /// An object row (`objectColumns`, maybe followed by others from `objectColumnCount` on),
    /// without its blob's photo details.
    static func storedObject(_ row: PostgresRow) throws -> StoredObject {
        let (bucket, name, digest, size, contentType, owner, createdAt, updatedAt, md5, settingsJSON, generation, metageneration) =
            try row.decode((String, String, String, Int64, String, String, Date, Date, String?, String?, Int64, Int64).self)
        var object = StoredObject(
            path: try storedPath(bucket: bucket, name: name), digest: try storedDigest(digest), size: size, contentType: contentType, owner: owner,
            createdAt: createdAt, updatedAt: updatedAt, photo: nil, thumbnails: [])
        try object.setStoredFields(md5: md5, settingsJSON: settingsJSON, generation: generation, metageneration: metageneration)
        return object
    }

    /// The columns of `upload_sessions` that `uploadSessionRecord(_:)` decodes.
    static let uploadSessionColumns =
        "id, bucket, name, spot_id, owner, declared_size, max_objects, requires_ownership, terms, created_at, expires_at"

    /// An upload session row (`uploadSessionColumns`).
    static func uploadSessionRecord(_ row: PostgresRow) throws -> UploadSessionRecord {
        let (id, bucket, name, spotId, owner, declaredSize, maxObjects, requiresOwnership, terms, createdAt, expiresAt) =
            try row.decode((String, String, String, String?, String, Int64?, Int?, Bool, String, Date, Date).self)
        return UploadSessionRecord(
            id: id, bucket: bucket, name: name, spotId: spotId, owner: owner, declaredSize: declaredSize, maxObjects: maxObjects,
            requiresOwnership: requiresOwnership, terms: terms, createdAt: createdAt, expiresAt: expiresAt)
    }

    /// A spot row (`spotColumns`).
    static func spotRecord(_ row: PostgresRow) throws -> SpotRecord {
        let (bucket, id, owner, createdAt, name, description, cityOverride, latitude, longitude, altitude, hasPlace, city, region,
             country, countryCode, placeDistanceKm, cityKey, scattered, hidesLocation) =
            try row.decode((
                String, String, String, Date, String?, String?, String?, Double?, Double?, Double?, Bool, String?, String?,
                String?, String?, Double?, String?, Bool, Bool
            ).self)
        var spot = SpotRecord(bucket: bucket, id: id, owner: owner, createdAt: createdAt)
        spot.name = name
        spot.description = description
        spot.cityOverride = cityOverride
        setGeotag(&spot, (latitude, longitude, altitude, hasPlace, city, region, country, countryCode, placeDistanceKm))
        spot.cityKey = cityKey
        spot.scattered = scattered
        spot.hidesLocation = hidesLocation
        return spot
    }

    /// A photo row (`photoColumns`).
    static func photoRecord(_ row: PostgresRow) throws -> PhotoRecord {
        let (digest, width, height, orientation, takenAt, cameraMake, cameraModel, latitude, longitude, altitude, hasPlace, city,
             region, country, countryCode, placeDistanceKm) =
            try row.decode((
                String, Int, Int, Int, String?, String?, String?, Double?, Double?, Double?, Bool, String?, String?, String?,
                String?, Double?
            ).self)
        var photo = PhotoRecord(
            digest: digest, width: width, height: height, orientation: orientation, takenAt: takenAt, cameraMake: cameraMake,
            cameraModel: cameraModel)
        setGeotag(&photo, (latitude, longitude, altitude, hasPlace, city, region, country, countryCode, placeDistanceKm))
        return photo
    }

    /// A thumbnail row (`thumbnailColumns`).
    static func thumbnail(_ row: PostgresRow) throws -> Thumbnail {
        let (size, digest, width, height, byteCount, contentType) = try row.decode((Int, String, Int, Int, Int, String).self)
        return Thumbnail(
            size: size, digest: try storedDigest(digest), width: width, height: height, byteCount: byteCount, contentType: contentType)
    }

    private static func setGeotag(_ record: inout some GeotaggedRecord, _ values: GeotaggedValues) {
        (record.latitude, record.longitude, record.altitude, record.hasPlace, record.city, record.region, record.country,
         record.countryCode, record.placeDistanceKm) = values
    }

    /// Writes the owner's fields and the derived location of `spot` to its row.
    static func update(_ spot: SpotRecord, _ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            UPDATE spots SET name = \(spot.name), description = \(spot.description), city_override = \(spot.cityOverride),
                latitude = \(spot.latitude), longitude = \(spot.longitude), altitude = \(spot.altitude), has_place = \(spot.hasPlace),
                city = \(spot.city), region = \(spot.region), country = \(spot.country), country_code = \(spot.countryCode),
                place_distance_km = \(spot.placeDistanceKm), city_key = \(spot.cityKey), scattered = \(spot.scattered),
                hides_location = \(spot.hidesLocation)
            WHERE bucket = \(spot.bucket) AND id = \(spot.id)
            """, logger: logger)
    }
}

extension PostgresRow {
    /// The value of column `index` (from 0).
    func decode<T: PostgresDecodable>(_: T.Type, at index: Int) throws -> T {
        try makeRandomAccess()[index].decode(T.self)
    }
}

/// A statement whose shape depends on its values (optional conditions, a variable number
/// of ranges): SQL text with `$n` placeholders, and the values bound to them.
struct Statement {
    var sql: String
    private var binds = PostgresBindings()

    init(_ sql: String) {
        self.sql = sql
    }

    /// Appends a placeholder for `value`.
    mutating func bind(_ value: some PostgresDynamicTypeEncodable) {
        binds.append(value)
        sql += "$\(binds.count)"
    }

    /// Appends `$a AND $b` for the bounds of `range`.
    mutating func bindRange(_ range: ClosedRange<Double>) {
        bind(range.lowerBound)
        sql += " AND "
        bind(range.upperBound)
    }

    var query: PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: binds) }
}

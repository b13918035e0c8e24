import Foundation
import SpotCore

// The rows of the catalog as every database keeps them: column lists beside the decoding
// that depends on their order.

/// The position and place columns of `spots` and `photos`, in `GeotaggedRecord.setGeotag` order.
let geotagColumns = "latitude, longitude, altitude, has_place, city, region, country, country_code, place_distance_km"

/// The columns of `objects` that `storedObject(_:)` decodes.
let objectColumns = "bucket, name, digest, size, content_type, owner, created_at, updated_at, md5, settings_json, generation, metageneration"

/// How many columns `objectColumns` names: the index of the first column after them.
let objectColumnCount = 12

/// The columns of `spots` that `SpotRecord(_:)` decodes.
let spotColumns = "bucket, id, owner, created_at, name, description, city_override, \(geotagColumns), city_key, scattered, hides_location"

/// The columns of `photos` that `PhotoRecord(_:)` decodes.
let photoColumns = "digest, width, height, orientation, taken_at, camera_make, camera_model, \(geotagColumns)"

/// A photo upsert's `SET` list (every column but the digest from `excluded`) and the
/// condition that some column changed, worked out once from `photoColumns`.
let photoUpsert: (set: String, changed: String) = {
    let fields = photoColumns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0 != "digest" }
    return (fields.map { "\($0) = excluded.\($0)" }.joined(separator: ", "),
            fields.map { "photos.\($0) IS DISTINCT FROM excluded.\($0)" }.joined(separator: " OR "))
}()

/// The columns of `thumbnails` that `Thumbnail(_:)` decodes (after the original's digest).
let thumbnailColumns = "size, thumb_digest, width, height, byte_count, content_type"

/// The columns of `upload_sessions` that `UploadSessionRecord(_:)` decodes.
let uploadSessionColumns = "id, bucket, name, spot_id, owner, declared_size, max_objects, requires_ownership, terms, created_at, expires_at"

/// An object row (`objectColumns`, maybe followed by others), without its blob's photo details.
func storedObject(_ row: SQLRow) throws -> StoredObject {
    var object = StoredObject(
        path: try storedPath(bucket: row(0), name: row(1)), digest: try storedDigest(row(2)), size: try row(3), contentType: try row(4),
        owner: try row(5), createdAt: try row(6), updatedAt: try row(7), photo: nil, thumbnails: [])
    try object.setStoredFields(md5: row(8), settingsJSON: row(9), generation: row(10), metageneration: row(11))
    return object
}

extension UploadSessionRecord {
    /// An upload session row (`uploadSessionColumns`).
    init(_ row: SQLRow) throws {
        self.init(
            id: try row(0), bucket: try row(1), name: try row(2), spotId: try row(3), owner: try row(4), declaredSize: try row(5),
            maxObjects: try row(6), requiresOwnership: try row(7), terms: try row(8), createdAt: try row(9), expiresAt: try row(10))
    }
}

extension SpotRecord {
    /// A spot row (`spotColumns`).
    init(_ row: SQLRow) throws {
        self.init(bucket: try row(0), id: try row(1), owner: try row(2), createdAt: try row(3))
        name = try row(4)
        description = try row(5)
        cityOverride = try row(6)
        try setGeotag(row, from: 7)
        cityKey = try row(16)
        scattered = try row(17)
        hidesLocation = try row(18)
    }

    /// The statement writing the owner's fields and the derived location to the spot's row.
    var update: CatalogSQL {
        """
        UPDATE spots SET name = \(name), description = \(description), city_override = \(cityOverride),
            latitude = \(latitude), longitude = \(longitude), altitude = \(altitude), has_place = \(hasPlace),
            city = \(city), region = \(region), country = \(country), country_code = \(countryCode),
            place_distance_km = \(placeDistanceKm), city_key = \(cityKey), scattered = \(scattered),
            hides_location = \(hidesLocation)
        WHERE bucket = \(bucket) AND id = \(id)
        """
    }
}

extension PhotoRecord {
    /// A photo row (`photoColumns`).
    init(_ row: SQLRow) throws {
        self.init(
            digest: try row(0), width: try row(1), height: try row(2), orientation: try row(3), takenAt: try row(4),
            cameraMake: try row(5), cameraModel: try row(6))
        try setGeotag(row, from: 7)
    }

    /// The values of `photoColumns`, for an insert.
    var values: CatalogSQL {
        """
        \(digest), \(width), \(height), \(orientation), \(takenAt), \(cameraMake), \(cameraModel), \(latitude), \(longitude),
        \(altitude), \(hasPlace), \(city), \(region), \(country), \(countryCode), \(placeDistanceKm)
        """
    }
}

extension GeotaggedRecord {
    /// Reads `geotagColumns` from column `first` of `row` on.
    mutating func setGeotag(_ row: SQLRow, from first: Int) throws {
        latitude = try row(first)
        longitude = try row(first + 1)
        altitude = try row(first + 2)
        hasPlace = try row(first + 3)
        city = try row(first + 4)
        region = try row(first + 5)
        country = try row(first + 6)
        countryCode = try row(first + 7)
        placeDistanceKm = try row(first + 8)
    }
}

extension Thumbnail {
    /// A thumbnail row (`thumbnailColumns`, from column `first` on).
    init(_ row: SQLRow, from first: Int = 0) throws {
        self.init(
            size: try row(first), digest: try storedDigest(row(first + 1)), width: try row(first + 2), height: try row(first + 3),
            byteCount: try row(first + 4), contentType: try row(first + 5))
    }
}

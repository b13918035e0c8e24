import Foundation
import SpotCore

// The rows of the catalog as every database keeps them: column lists beside the decoding
// and values that depend on their order.

/// The position and place columns of `spots` and `photos` (`geotag(_:from:)`, `geotagValues`).
let geotagColumns = "latitude, longitude, altitude, has_place, city, region, country, country_code, place_distance_km"

/// The columns of `objects` that `storedObject(_:)` decodes.
let objectColumns = "bucket, name, digest, size, content_type, owner, created_at, updated_at, md5, settings_json, generation, metageneration"

/// How many columns `objectColumns` names: the index of the first column after them.
let objectColumnCount = 12

/// `geotagColumns` of `photos` in a statement that joins other tables.
let photoGeotagColumns = geotagColumns.split(separator: ", ").map { "photos.\($0)" }.joined(separator: ", ")

/// The columns of `spots` that `SpotRecord(_:)` decodes.
let spotColumns = """
    bucket, id, owner, created_at, name, description, city_override, \(geotagColumns), city_key, scattered, hides_location, object_count
    """

/// The columns of `photos` that `photo(_:)` decodes and `photoValues` gives.
let photoColumns = "digest, width, height, orientation, taken_at, camera_make, camera_model, \(geotagColumns)"

/// A photo upsert's `SET` list (every column but the digest from `excluded`) and the
/// condition that some column changed, worked out once from `photoColumns`.
let photoUpsert: (set: String, changed: String) = {
    let fields = photoColumns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0 != "digest" }
    return (fields.map { "\($0) = excluded.\($0)" }.joined(separator: ", "),
            fields.map { "photos.\($0) IS DISTINCT FROM excluded.\($0)" }.joined(separator: " OR "))
}()

/// Whether a `photos` row holds a valid position (`GeoPoint.isValidPosition`): the rows a
/// spot takes its location from, whose position their objects' `latitude` and `longitude` repeat.
let photoHasValidPosition = """
    photos.latitude BETWEEN -90 AND 90 AND photos.longitude BETWEEN -180 AND 180 AND NOT (photos.latitude = 0 AND photos.longitude = 0)
    """

/// The columns of `thumbnails` that `Thumbnail(_:)` decodes (after the original's digest).
let thumbnailColumns = "size, thumb_digest, width, height, byte_count, content_type"

/// The columns of `upload_sessions` that `UploadSession(_:)` decodes and `uploadSessionValues` gives.
let uploadSessionColumns = "id, bucket, name, spot_id, owner, declared_size, max_objects, requires_ownership, terms, created_at, expires_at"

/// An object row (`objectColumns`, maybe followed by others), without its blob's photo details.
func storedObject(_ row: SQLRow) throws -> StoredObject {
    var object = StoredObject(
        path: try storedPath(bucket: row(0), name: row(1)), digest: try storedDigest(row(2)), size: try row(3), contentType: try row(4),
        owner: try row(5), createdAt: try row(6), updatedAt: try row(7), photo: nil, thumbnails: [])
    object.md5 = try (row(8) as String?).map(storedMD5)
    object.settings = try (row(9) as String?).map(ObjectSettings.init(storedJSON:)) ?? ObjectSettings()
    object.generation = try row(10)
    object.metageneration = try row(11)
    return object
}

extension UploadSession {
    /// An upload session row (`uploadSessionColumns`), without its chunks.
    init(_ row: SQLRow) throws {
        self.init(
            id: try row(0), path: try storedPath(bucket: row(1), name: row(2)), owner: try row(4), declaredSize: try row(5),
            admission: SpotAdmission(maxObjects: try row(6), requiresOwnership: try row(7)), terms: try row(8),
            createdAt: try row(9), expiresAt: try row(10))
    }
}

/// The values of `uploadSessionColumns` for `session`; `spot_id` is its path's top folder.
func uploadSessionValues(_ session: UploadSession) -> CatalogSQL {
    """
    \(session.id), \(session.path.bucket), \(session.path.name), \(session.path.topFolder), \(session.owner), \(session.declaredSize),
    \(session.admission.maxObjects), \(session.admission.requiresOwnership), \(session.terms), \(session.createdAt), \(session.expiresAt)
    """
}

/// A photo row (`photoColumns`): its digest and metadata.
func photo(_ row: SQLRow) throws -> (digest: Digest, metadata: PhotoMetadata) {
    let (location, place) = try geotag(row, from: 7)
    let metadata = PhotoMetadata(
        width: try row(1), height: try row(2), orientation: try row(3), takenAt: try row(4), cameraMake: try row(5),
        cameraModel: try row(6), location: location, place: place)
    return (try storedDigest(row(0)), metadata)
}

/// The values of `photoColumns` for `photo` of blob `digest`.
func photoValues(_ photo: PhotoMetadata, of digest: Digest) -> CatalogSQL {
    """
    \(digest.hex), \(photo.width), \(photo.height), \(photo.orientation), \(photo.takenAt), \(photo.cameraMake), \(photo.cameraModel),
    \(geotagValues(photo.location, photo.place))
    """
}

/// The position (when latitude and longitude are set) and place (when `has_place`) that
/// `geotagColumns` hold from column `first` of `row` on.
func geotag(_ row: SQLRow, from first: Int) throws -> (location: GeoPoint?, place: Place?) {
    var location: GeoPoint?
    if let latitude: Double = try row(first), let longitude: Double = try row(first + 1) {
        location = GeoPoint(latitude: latitude, longitude: longitude, altitude: try row(first + 2))
    }
    guard try row(first + 3) as Bool else { return (location, nil) }
    let place = Place(city: try row(first + 4), region: try row(first + 5), country: try row(first + 6), countryCode: try row(first + 7),
                      distanceKm: try row(first + 8))
    return (location, place)
}

/// The values of `geotagColumns` for `location` and `place`.
func geotagValues(_ location: GeoPoint?, _ place: Place?) -> CatalogSQL {
    """
    \(location?.latitude), \(location?.longitude), \(location?.altitude), \(place != nil), \(place?.city), \(place?.region),
    \(place?.country), \(place?.countryCode), \(place?.distanceKm)
    """
}

extension SpotRecord {
    /// A spot row (`spotColumns`).
    init(_ row: SQLRow) throws {
        self.init(bucket: try row(0), id: try row(1), owner: try row(2), createdAt: try row(3))
        name = try row(4)
        description = try row(5)
        cityOverride = try row(6)
        (location, place) = try geotag(row, from: 7)
        cityKey = try row(16)
        scattered = try row(17)
        hidesLocation = try row(18)
        objectCount = try row(19)
    }

    /// The statement writing the owner's fields, the derived location and the count to the spot's row.
    var update: CatalogSQL {
        """
        UPDATE spots SET (
                name, description, city_override, \(unescaped: geotagColumns), city_key, scattered, hides_location, object_count)
            = (\(name), \(description), \(cityOverride), \(geotagValues(location, place)), \(cityKey), \(scattered), \(hidesLocation),
               \(objectCount))
        WHERE bucket = \(bucket) AND id = \(id)
        """
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

extension ObjectSettings {
    /// The `settings_json` column: JSON with sorted keys, `nil` when nothing is set.
    var storedJSON: String? {
        guard !isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings and a dictionary of strings always encode.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The settings `settings_json` holds; malformed JSON is a corrupt catalog.
    init(storedJSON: String) throws {
        do {
            self = try JSONDecoder().decode(ObjectSettings.self, from: Data(storedJSON.utf8))
        } catch {
            throw SpotError(.internal, "the catalog holds malformed object settings '\(storedJSON)'")
        }
    }
}

/// The `md5` column of an MD5: 32 lowercase hex digits, `nil` when unknown.
func storedHex(md5: [UInt8]?) -> String? {
    md5.map { bytes in bytes.map { String(format: "%02x", $0) }.joined() }
}

/// The MD5 the `md5` column holds as hex; a malformed one is a corrupt catalog.
func storedMD5(_ hex: String) throws -> [UInt8] {
    let digits = Array(hex.utf8)
    guard digits.count == 32, digits.allSatisfy({ "0123456789abcdef".utf8.contains($0) }) else {
        throw SpotError(.internal, "the catalog holds a malformed MD5 '\(hex)'")
    }
    return stride(from: 0, to: 32, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

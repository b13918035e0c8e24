import Foundation
import GRDB
import CatalogPlanning
import SpotCore

// One record type per table. Digests are stored as their 64 lowercase hex characters,
// dates as GRDB stores them ("yyyy-MM-dd HH:mm:ss.SSS", UTC).

/// A row of `users`.
struct UserRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "users"
    static let tokens = hasMany(TokenRecord.self)

    var uid: String
    var createdAt: Date
}

/// A row of `tokens`: the SHA-256 of a bearer token, never the token itself.
struct TokenRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "tokens"

    var digest: String
    var uid: String
    var createdAt: Date
}

/// A user with the number of its tokens, as `UserRecord.summaries` selects it.
struct UserSummaryRow: Decodable, FetchableRecord {
    var uid: String
    var createdAt: Date
    var tokenCount: Int

    func user(claims: [String: String]) -> User { User(uid: uid, createdAt: createdAt, tokenCount: tokenCount, claims: claims) }
}

/// A row of `claims`: one `request.auth.token.<key>` value of a user.
struct ClaimRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "claims"

    var uid: String
    var key: String
    var value: String
}

/// A row of `downloadTokens`: the SHA-256 of a download token of one object row; deleted
/// with the row (cascade) and when the object is replaced.
struct DownloadTokenRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "downloadTokens"

    var digest: String
    var objectId: Int64
    var createdAt: Date

    var token: DownloadToken { DownloadToken(id: String(digest.prefix(16)), createdAt: createdAt) }
}

extension UserRecord {
    /// The users `request` selects, each with its token count, by uid.
    static func summaries(_ request: QueryInterfaceRequest<UserRecord> = all()) -> QueryInterfaceRequest<UserSummaryRow> {
        request
            .annotated(with: tokens.count.forKey("tokenCount"))
            .order(Column("uid"))
            .asRequest(of: UserSummaryRow.self)
    }
}

/// A row of `spots`: who owns a spot, the owner's overrides, and the location derived
/// from its photos (kept up to date by every commit and removal, see `refreshLocation`).
/// Created by the first commit under a count limit.
struct SpotRecord: Codable, Equatable, FetchableRecord, PersistableRecord, GeotaggedRecord {
    static let databaseTableName = "spots"

    enum Columns {
        static let bucket = Column("bucket")
        static let id = Column("id")
        static let cityKey = Column("cityKey")
    }

    var bucket: String
    var id: String
    var owner: String
    var createdAt: Date
    /// The owner's name for the spot.
    var name: String?
    /// The owner's description.
    var description: String?
    /// The owner's city, which geocoding never replaces.
    var cityOverride: String?
    // The first geotagged photo's position and place, derived.
    var latitude: Double?
    var longitude: Double?
    var altitude: Double?
    var hasPlace = false
    /// The geocoded city (not the override).
    var city: String?
    var region: String?
    var country: String?
    var countryCode: String?
    var placeDistanceKm: Double?
    /// `cityKey(_:)` of the effective city (override, else geocoded), `nil` without one.
    var cityKey: String?
    /// Whether the spot's photos are more than 1 km apart.
    var scattered = false
    /// Whether the owner hid the exact position from everyone else.
    var hidesLocation = false

    /// The primary key of spot `id` in `bucket`.
    static func key(bucket: String, id: String) -> [String: String] { ["bucket": bucket, "id": id] }

    /// The city readers see: the override, else the geocoded one.
    var effectiveCity: String? { cityOverride ?? city }

    /// Records `derived` (or no location) and brings `cityKey` up to date.
    mutating func setLocation(_ derived: SpotLocation?) {
        location = derived?.location
        place = derived?.place
        scattered = derived?.scattered ?? false
        updateCityKey()
    }

    /// Sets `cityKey` from the effective city; a city that folds to nothing has no key.
    mutating func updateCityKey() {
        cityKey = effectiveCity.map(SpotCore.cityKey).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The domain value, with `objects` (in name order) and the distance of a `near` search.
    ///
    /// `place.city` is the effective city; with an override, `distanceKm` is `nil` (it
    /// measured the geocoded city) and a spot without a place gets one holding only the city.
    func details(objects: [StoredObject], distanceKm: Double? = nil) -> SpotDetails {
        var effectivePlace = place
        if let cityOverride {
            effectivePlace = Place(
                city: cityOverride, region: place?.region, country: place?.country, countryCode: place?.countryCode)
        }
        return SpotDetails(
            bucket: bucket, id: id, owner: owner, objectCount: objects.count, name: name, description: description,
            location: location, place: effectivePlace, cityOverride: cityOverride, scattered: scattered,
            objects: objects, distanceKm: distanceKm, hidesLocation: hidesLocation)
    }
}

/// The primary key of a spot.
struct SpotKey: Hashable {
    var bucket: String
    var id: String
}

/// A row of `objects`: a name in a bucket pointing at a blob.
struct ObjectRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "objects"

    enum Columns {
        static let bucket = Column("bucket")
        static let name = Column("name")
        static let spotId = Column("spotId")
    }

    var id: Int64?
    var bucket: String
    var name: String
    /// The folder directly under the bucket (`ObjectPath.topFolder`), whatever the limits.
    var spotId: String?
    var digest: String
    var size: Int64
    var contentType: String
    var owner: String
    var createdAt: Date
    var updatedAt: Date

    /// Points this row at `object`'s content (digest, size, content type, owner) as of
    /// `now`, keeping its id, path and `createdAt`.
    mutating func setContent(of object: NewObject, at now: Date) {
        digest = object.digest.hex
        size = object.size
        contentType = object.contentType
        owner = object.owner
        updatedAt = now
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    /// The unique key of the object at `path`.
    static func key(_ path: ObjectPath) -> [String: String] { ["bucket": path.bucket, "name": path.name] }

    /// The domain value, with the photo metadata and thumbnails of the row's digest.
    func storedObject(photo: PhotoMetadata?, thumbnails: [Thumbnail]) throws -> StoredObject {
        let path: ObjectPath
        do {
            path = try ObjectPath(bucket: bucket, name: name)
        } catch {
            throw SpotError(.internal, "the catalog holds an invalid object path '\(bucket)/\(name)': \(error.message)")
        }
        return StoredObject(
            path: path, digest: try storedDigest(digest), size: size, contentType: contentType, owner: owner,
            createdAt: createdAt, updatedAt: updatedAt, photo: photo, thumbnails: thumbnails)
    }
}

extension ObjectRecord {
    /// A new row for `object`, created and updated at `now`.
    init(_ object: NewObject, at now: Date) {
        self.init(
            id: nil, bucket: object.path.bucket, name: object.path.name, spotId: object.path.topFolder,
            digest: "", size: 0, contentType: "", owner: "", createdAt: now, updatedAt: now)
        setContent(of: object, at: now)
    }
}

/// A row of `photos`: what a blob says about itself, shared by every object with those bytes.
struct PhotoRecord: Codable, Equatable, FetchableRecord, PersistableRecord, GeotaggedRecord {
    static let databaseTableName = "photos"

    var digest: String
    var width: Int
    var height: Int
    var orientation: Int
    var takenAt: String?
    var cameraMake: String?
    var cameraModel: String?
    var latitude: Double?
    var longitude: Double?
    var altitude: Double?
    var hasPlace = false
    var city: String?
    var region: String?
    var country: String?
    var countryCode: String?
    var placeDistanceKm: Double?

    init(digest: Digest, _ photo: PhotoMetadata) {
        self.digest = digest.hex
        self.width = photo.width
        self.height = photo.height
        self.orientation = photo.orientation
        self.takenAt = photo.takenAt
        self.cameraMake = photo.cameraMake
        self.cameraModel = photo.cameraModel
        self.location = photo.location
        self.place = photo.place
    }

    /// The domain value.
    var metadata: PhotoMetadata {
        PhotoMetadata(
            width: width, height: height, orientation: orientation, takenAt: takenAt,
            cameraMake: cameraMake, cameraModel: cameraModel, location: location, place: place)
    }
}

/// A row holding a position and a place in flat columns: a photo's own, or the one a spot
/// takes from its photos.
protocol GeotaggedRecord {
    var latitude: Double? { get set }
    var longitude: Double? { get set }
    var altitude: Double? { get set }
    /// Whether the place columns hold a place: a place far from everything has no field set.
    var hasPlace: Bool { get set }
    var city: String? { get set }
    var region: String? { get set }
    var country: String? { get set }
    var countryCode: String? { get set }
    var placeDistanceKm: Double? { get set }
}

extension GeotaggedRecord {
    /// The position; present when both latitude and longitude are.
    var location: GeoPoint? {
        get {
            guard let latitude, let longitude else { return nil }
            return GeoPoint(latitude: latitude, longitude: longitude, altitude: altitude)
        }
        set {
            latitude = newValue?.latitude
            longitude = newValue?.longitude
            altitude = newValue?.altitude
        }
    }

    /// The place, or `nil` when none was recorded.
    var place: Place? {
        get {
            guard hasPlace else { return nil }
            return Place(city: city, region: region, country: country, countryCode: countryCode, distanceKm: placeDistanceKm)
        }
        set {
            hasPlace = newValue != nil
            city = newValue?.city
            region = newValue?.region
            country = newValue?.country
            countryCode = newValue?.countryCode
            placeDistanceKm = newValue?.distanceKm
        }
    }
}

/// A row of `thumbnails`: one thumbnail blob of a blob, per requested size.
struct ThumbnailRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "thumbnails"

    var digest: String
    var size: Int
    var thumbDigest: String
    var width: Int
    var height: Int
    var byteCount: Int
    var contentType: String

    init(of digest: Digest, _ thumbnail: Thumbnail) {
        self.digest = digest.hex
        self.size = thumbnail.size
        self.thumbDigest = thumbnail.digest.hex
        self.width = thumbnail.width
        self.height = thumbnail.height
        self.byteCount = thumbnail.byteCount
        self.contentType = thumbnail.contentType
    }

    /// The domain value.
    func thumbnail() throws -> Thumbnail {
        Thumbnail(
            size: size, digest: try storedDigest(thumbDigest), width: width, height: height,
            byteCount: byteCount, contentType: contentType)
    }
}

/// The digest a row holds as hex; a malformed one is a corrupt catalog.
func storedDigest(_ hex: String) throws -> Digest {
    guard let digest = Digest(hex: hex) else {
        throw SpotError(.internal, "the catalog holds a malformed digest '\(hex)'")
    }
    return digest
}

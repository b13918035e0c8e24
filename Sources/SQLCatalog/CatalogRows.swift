import Foundation
import SpotCore

// The rows every catalog backend keeps, with the rules that derive one field from another,
// so that the SQLite and PostgreSQL catalogs agree on them. Column names are the property
// names; a backend adds its own database conformances.

/// A row of `spots`: who owns a spot, the owner's overrides, and the location derived
/// from its photos (kept up to date by every commit and removal).
/// Created by the first commit into the spot.
package struct SpotRecord: Codable, Equatable, Sendable, GeotaggedRecord {
    package var bucket: String
    package var id: String
    package var owner: String
    package var createdAt: Date
    /// The owner's name for the spot.
    package var name: String?
    /// The owner's description.
    package var description: String?
    /// The owner's city, which geocoding never replaces.
    package var cityOverride: String?
    // The first geotagged photo's position and place, derived.
    package var latitude: Double?
    package var longitude: Double?
    package var altitude: Double?
    package var hasPlace = false
    /// The geocoded city (not the override).
    package var city: String?
    package var region: String?
    package var country: String?
    package var countryCode: String?
    package var placeDistanceKm: Double?
    /// `cityKey(_:)` of the effective city (override, else geocoded), `nil` without one.
    package var cityKey: String?
    /// Whether the spot's photos are more than 1 km apart.
    package var scattered = false
    /// Whether the owner hid the exact position from everyone else.
    package var hidesLocation = false

    /// A new spot of `owner`, without overrides or location.
    package init(bucket: String, id: String, owner: String, createdAt: Date) {
        self.bucket = bucket
        self.id = id
        self.owner = owner
        self.createdAt = createdAt
    }

    /// The city readers see: the override, else the geocoded one.
    package var effectiveCity: String? { cityOverride ?? city }

    /// Records `derived` (or no location) and brings `cityKey` up to date.
    package mutating func setLocation(_ derived: SpotLocation?) {
        location = derived?.location
        place = derived?.place
        scattered = derived?.scattered ?? false
        updateCityKey()
    }

    /// Sets `cityKey` from the effective city; a city that folds to nothing has no key.
    package mutating func updateCityKey() {
        cityKey = effectiveCity.map(SpotCore.cityKey).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The domain value, with `objects` (in name order) and the distance of a `near` search.
    ///
    /// `place.city` is the effective city; with an override, `distanceKm` is `nil` (it
    /// measured the geocoded city) and a spot without a place gets one holding only the city.
    package func details(objects: [StoredObject], distanceKm: Double? = nil) -> SpotDetails {
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
package struct SpotKey: Hashable, Sendable {
    package var bucket: String
    package var id: String

    package init(bucket: String, id: String) {
        self.bucket = bucket
        self.id = id
    }
}

/// A row of `photos`: what a blob says about itself, shared by every object with those bytes.
package struct PhotoRecord: Codable, Equatable, Sendable, GeotaggedRecord {
    package var digest: String
    package var width: Int
    package var height: Int
    package var orientation: Int
    package var takenAt: String?
    package var cameraMake: String?
    package var cameraModel: String?
    package var latitude: Double?
    package var longitude: Double?
    package var altitude: Double?
    package var hasPlace = false
    package var city: String?
    package var region: String?
    package var country: String?
    package var countryCode: String?
    package var placeDistanceKm: Double?

    /// A photo without position or place.
    package init(digest: String, width: Int, height: Int, orientation: Int, takenAt: String?, cameraMake: String?, cameraModel: String?) {
        self.digest = digest
        self.width = width
        self.height = height
        self.orientation = orientation
        self.takenAt = takenAt
        self.cameraMake = cameraMake
        self.cameraModel = cameraModel
    }

    package init(digest: Digest, _ photo: PhotoMetadata) {
        self.init(
            digest: digest.hex, width: photo.width, height: photo.height, orientation: photo.orientation, takenAt: photo.takenAt,
            cameraMake: photo.cameraMake, cameraModel: photo.cameraModel)
        self.location = photo.location
        self.place = photo.place
    }

    /// The domain value.
    package var metadata: PhotoMetadata {
        PhotoMetadata(
            width: width, height: height, orientation: orientation, takenAt: takenAt,
            cameraMake: cameraMake, cameraModel: cameraModel, location: location, place: place)
    }
}

/// A row holding a position and a place in flat columns: a photo's own, or the one a spot
/// takes from its photos.
package protocol GeotaggedRecord {
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
    package var location: GeoPoint? {
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
    package var place: Place? {
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

extension SpotEdit {
    /// Applies the edit to the owner's fields of `spot` and brings its city key up to date.
    package func apply(to spot: inout SpotRecord) {
        if let name { spot.name = name }
        if let description { spot.description = description }
        if let cityOverride { spot.cityOverride = cityOverride }
        if let hidesLocation { spot.hidesLocation = hidesLocation }
        spot.updateCityKey()
    }
}

/// The path of an object row; an invalid one is a corrupt catalog.
package func storedPath(bucket: String, name: String) throws -> ObjectPath {
    do {
        return try ObjectPath(bucket: bucket, name: name)
    } catch {
        throw SpotError(.internal, "the catalog holds an invalid object path '\(bucket)/\(name)': \(error.message)")
    }
}

/// The digest a row holds as hex; a malformed one is a corrupt catalog.
package func storedDigest(_ hex: String) throws -> Digest {
    guard let digest = Digest(hex: hex) else {
        throw SpotError(.internal, "the catalog holds a malformed digest '\(hex)'")
    }
    return digest
}

extension CatalogIssue {
    /// Objects in spot `id` of `bucket`, which has no spot row: its owner (who may add to it) is unknown.
    package static func spotWithoutRow(bucket: String, id: String) -> CatalogIssue {
        CatalogIssue(
            problem: "spot \(bucket)/\(id) has objects but no spot row (its owner is unknown)",
            remedy: "run `spotstore fsck --repair` to recreate it, owned by the owner of its oldest object",
            repairable: true)
    }

    /// `spot` records a location that is not `derived`, the one its objects' photos give.
    package static func staleLocation(of spot: SpotRecord, derived: SpotRecord) -> CatalogIssue {
        let what = derived.location == nil ? "a location none of its objects' photos has" : "a location that is not its first geotagged photo's"
        return CatalogIssue(
            problem: "spot \(spot.bucket)/\(spot.id) records \(what) (derived state out of date)",
            remedy: "run `spotstore fsck --repair` to derive it again from its objects",
            repairable: true)
    }

    /// `count` download tokens of objects that are gone.
    package static func orphanDownloadTokens(_ count: Int) -> CatalogIssue {
        CatalogIssue(
            problem: "\(count) download token\(count == 1 ? "" : "s") of objects that no longer exist",
            remedy: "run `spotstore fsck --repair` to delete them",
            repairable: true)
    }
}

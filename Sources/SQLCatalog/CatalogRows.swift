import Foundation
import SpotCore

/// A row of `spots`: who owns a spot, the owner's overrides, and the location derived
/// from its photos (kept up to date by every commit and removal).
/// Created by the first commit into the spot.
package struct SpotRecord: Equatable, Sendable {
    package var bucket: String
    package var id: String
    package var owner: String
    package var createdAt: Date
    /// How many objects the spot holds, kept by every commit and removal.
    package var objectCount = 0
    package var name: String?
    package var description: String?
    /// The owner's city, which geocoding never replaces.
    package var cityOverride: String?
    /// The first geotagged photo's position and place (its city is the geocoded one).
    package var location: GeoPoint?
    package var place: Place?
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

    /// Records `derived` (or no location) and brings `cityKey` up to date.
    package mutating func setLocation(_ derived: SpotLocation?) {
        location = derived?.location
        place = derived?.place
        scattered = derived?.scattered ?? false
        updateCityKey()
    }

    /// Sets `cityKey` from the effective city; a city that folds to nothing has no key.
    package mutating func updateCityKey() {
        cityKey = (cityOverride ?? place?.city).map(SpotCore.cityKey).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The domain value, with its first `objects` (in name order) and the distance of a `near` search.
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
            bucket: bucket, id: id, owner: owner, objectCount: objectCount, name: name, description: description,
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

    /// The lock that commits and session starts into this spot take, whether or not the
    /// spot has a row yet (a row lock needs a row).
    var admissionLock: String { "spot \(bucket)/\(id)" }
}

extension SpotEdit {
    /// Applies the edit to the owner's fields of `spot` and brings its city key up to date.
    func apply(to spot: inout SpotRecord) {
        if let name { spot.name = name }
        if let description { spot.description = description }
        if let cityOverride { spot.cityOverride = cityOverride }
        if let hidesLocation { spot.hidesLocation = hidesLocation }
        spot.updateCityKey()
    }
}

/// The path of an object row; an invalid one is a corrupt catalog.
func storedPath(bucket: String, name: String) throws -> ObjectPath {
    do {
        return try ObjectPath(bucket: bucket, name: name)
    } catch {
        throw SpotError(.internal, "the catalog holds an invalid object path '\(bucket)/\(name)': \(error.message)")
    }
}

/// The digest a row holds as hex; a malformed one is a corrupt catalog.
func storedDigest(_ hex: String) throws -> Digest {
    guard let digest = Digest(hex: hex) else {
        throw SpotError(.internal, "the catalog holds a malformed digest '\(hex)'; restore the database from a backup")
    }
    return digest
}

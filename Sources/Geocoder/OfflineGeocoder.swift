import Foundation
import SpotCore

/// A populated place in the bundled GeoNames data (cities500: places of 500 people or
/// more, and seats of administrative divisions).
public struct GeoNamesPlace: Sendable, Equatable {
    /// Its position in the data, `0..<placeCount`.
    public let index: Int
    /// GeoNames' name: usually the local name in Latin script, with its accents ("São Paulo").
    public let name: String
    /// WGS 84 degrees, as GeoNames gives them (5 decimals).
    public let latitude: Double
    /// WGS 84 degrees, as GeoNames gives them (5 decimals).
    public let longitude: Double
    /// GeoNames' population; 0 where GeoNames has none.
    public let population: Int
    /// The first-level administrative division's name; `nil` where GeoNames has none.
    public let region: String?
    /// The country's English name.
    public let country: String
    /// ISO 3166-1 alpha-2.
    public let countryCode: String
}

/// How `OfflineGeocoder` chose its answer for a position (see `PostcardRule`).
public struct PlaceMatch: Sendable, Equatable {
    /// Which step of the rule decided.
    public enum Reason: Sendable, Equatable {
        /// The nearest place of the band of places with at least `bandMinimumPopulation`
        /// people (and fewer than the next band's minimum) is within its claim radius.
        case claimed(bandMinimumPopulation: Int, claimRadiusKm: Double)
        /// No band claims the position; the nearest place of all is within the city radius.
        case nearest
        /// Nothing within the city radius; the nearest place, within the country radius,
        /// gives the country and region only.
        case countryOnly
        /// No place within the country radius: open ocean or polar ice.
        case remote
    }

    /// The place named, or whose country is used; `nil` for `.remote`.
    public let place: GeoNamesPlace?
    /// Great-circle distance to `place`, km; `nil` for `.remote`.
    public let distanceKm: Double?
    /// Which step of the rule decided.
    public let reason: Reason
}

/// Reverse geocoding from a bundled extract of GeoNames, offline and exact on the sphere.
///
/// Names the place a person would write on a postcard (see `PostcardRule`): the Eiffel
/// Tower is in Paris, not in the arrondissement or suburb whose centroid is nearest.
/// Nearest-place searches are exact k-d tree searches over unit vectors, so they agree
/// with a brute-force haversine search, across the antimeridian and at the poles.
/// Immutable after loading: share one instance between threads.
public final class OfflineGeocoder: ReverseGeocoder {
    private let data: PlaceData
    /// The all-places tree: its node `i` is place `i`.
    private let all: SphereTree
    private let claims: ClaimGrid
    private let countryMask: NearnessMask

    private static let citySquared = squaredChord(kilometres: PostcardRule.cityRadiusKm)
    private static let countrySquared = squaredChord(kilometres: PostcardRule.countryRadiusKm)

    /// The path of the data file bundled with this module; `nil` if the resource bundle lacks it.
    public static var bundledDataPath: String? {
        Bundle.module.url(forResource: "places", withExtension: "bin")?.path
    }

    /// Loads the data bundled with this module (234,908 places; ~90 ms and ~30 MB in release builds).
    ///
    /// Throws `SpotError` when the resource is missing or corrupt (a broken build).
    public static func bundled() throws -> OfflineGeocoder {
        guard let path = bundledDataPath else {
            throw SpotError(.internal, "the geocoder's places.bin is missing from the Geocoder resource bundle")
        }
        return try OfflineGeocoder(contentsOf: path)
    }

    /// Loads a places file written by geodata/build-places.py.
    ///
    /// Throws `SpotError` `.notFound` when there is no such file and `.invalidContent`
    /// when it is not a places file, is truncated, or refers to things it does not hold.
    public init(contentsOf path: String) throws {
        let data = try PlaceData(contentsOf: path)
        all = SphereTree(data: data)
        claims = ClaimGrid(data: data, tree: all)
        countryMask = NearnessMask(data: data, radiusKm: PostcardRule.countryRadiusKm)
        self.data = data
    }

    /// How many places the data holds.
    public var placeCount: Int { data.count }

    /// The place at `index` (`0..<placeCount`; traps outside it).
    public func record(at index: Int) -> GeoNamesPlace {
        let region = data.regionIndex[index]
        let country = Int(data.countryIndex[index])
        return GeoNamesPlace(
            index: index, name: data.names[index],
            latitude: Double(data.latitudeE5[index]) / 100000.0, longitude: Double(data.longitudeE5[index]) / 100000.0,
            population: Int(data.population[index]),
            region: region == PlaceData.noRegion ? nil : data.regionNames[Int(region)],
            country: data.countryNames[country], countryCode: data.countryCodes[country])
    }

    /// The place at `latitude`, `longitude` per the `ReverseGeocoder` contract and
    /// `PostcardRule`; `nil` for an invalid position (NaN, infinite, out of range, 0,0).
    public func place(latitude: Double, longitude: Double) -> Place? {
        guard let resolution = resolve(latitude: latitude, longitude: longitude) else { return nil }
        guard resolution.place >= 0 else { return Place() }
        let index = resolution.place
        let region = data.regionIndex[index]
        let country = Int(data.countryIndex[index])
        let named = resolution.step != .countryOnly
        return Place(
            city: named ? data.names[index] : nil,
            region: region == PlaceData.noRegion ? nil : data.regionNames[Int(region)],
            country: data.countryNames[country], countryCode: data.countryCodes[country],
            distanceKm: named ? kilometres(squaredChord: resolution.squaredChord) : nil)
    }

    /// The answer for `latitude`, `longitude` with the reason it was chosen; `nil` for
    /// an invalid position.
    public func match(latitude: Double, longitude: Double) -> PlaceMatch? {
        guard let resolution = resolve(latitude: latitude, longitude: longitude) else { return nil }
        guard resolution.place >= 0 else { return PlaceMatch(place: nil, distanceKm: nil, reason: .remote) }
        let place = record(at: resolution.place)
        let reason: PlaceMatch.Reason
        switch resolution.step {
        case .claimed(let band):
            reason = .claimed(
                bandMinimumPopulation: PostcardRule.bandMinimums[band],
                claimRadiusKm: PostcardRule.claimRadiusKm(population: place.population))
        case .nearest: reason = .nearest
        case .countryOnly: reason = .countryOnly
        }
        return PlaceMatch(place: place, distanceKm: kilometres(squaredChord: resolution.squaredChord), reason: reason)
    }

    /// The exact nearest place of all to `latitude`, `longitude`, with its great-circle
    /// (haversine) distance in km; `nil` for an invalid position.
    public func nearest(latitude: Double, longitude: Double) -> (place: GeoNamesPlace, distanceKm: Double)? {
        guard GeoPoint(latitude: latitude, longitude: longitude).isValidPosition,
            let found = all.nearest(to: UnitVector(latitude: latitude, longitude: longitude), squaredChordBelow: .infinity)
        else { return nil }
        return (record(at: found.place), kilometres(squaredChord: found.squaredChord))
    }

    // MARK: - The rule

    private struct Resolution {
        enum Step: Equatable {
            case claimed(band: Int)
            case nearest
            case countryOnly
        }

        /// The place index, or -1 for nothing within the country radius.
        var place: Int
        var squaredChord: Double
        var step: Step
    }

    /// `PostcardRule`, without building any strings.
    @inline(__always)
    private func resolve(latitude: Double, longitude: Double) -> Resolution? {
        guard GeoPoint(latitude: latitude, longitude: longitude).isValidPosition else { return nil }
        // No place within the country radius means no claim either (claim radii are smaller).
        let cell = LatitudeLongitudeGrid.cell(latitude: latitude, longitude: longitude)
        guard countryMask.cells.contains(cell) else {
            return Resolution(place: -1, squaredChord: .infinity, step: .countryOnly)
        }
        let query = UnitVector(latitude: latitude, longitude: longitude)
        if let claim = claims.claim(query, cell: cell) {
            return Resolution(place: claim.place, squaredChord: claim.squaredChord, step: .claimed(band: claim.band))
        }
        guard let found = all.nearest(to: query, squaredChordBelow: Self.countrySquared.nextUp) else {
            return Resolution(place: -1, squaredChord: .infinity, step: .countryOnly)
        }
        return Resolution(
            place: found.place, squaredChord: found.squaredChord,
            step: found.squaredChord <= Self.citySquared ? .nearest : .countryOnly)
    }
}

import Foundation

/// A spot as readers see it: the owner's overrides, the location taken from its photos,
/// and the photos themselves.
public struct SpotDetails: Sendable, Equatable {
    /// The most objects a spot's details carry, so a spot of any size costs the same to show.
    public static let shownObjects = 100

    public var bucket: String
    public var id: String
    public var owner: String
    public var objectCount: Int
    /// The owner's name for the spot, if set.
    public var name: String?
    /// The owner's description, if set.
    public var description: String?
    /// The position of the spot's first photo (by creation time) that has GPS.
    public var location: GeoPoint?
    /// The place of that photo, with `city` replaced by the owner's override when set.
    public var place: Place?
    /// The owner's city override; geocoding never replaces it.
    public var cityOverride: String?
    /// True when the spot's photos are more than 1 km apart (`location` is then only the first's).
    public var scattered: Bool
    /// The spot's first objects in name order, at most `shownObjects`; the listing of the
    /// spot's folder pages through all of them.
    public var objects: [StoredObject]
    /// Distance from the query point, for `near` searches only.
    public var distanceKm: Double?
    /// Whether the owner hid the exact position: everyone else sees the city only.
    public var hidesLocation: Bool

    public init(
        bucket: String, id: String, owner: String, objectCount: Int, name: String? = nil, description: String? = nil,
        location: GeoPoint? = nil, place: Place? = nil, cityOverride: String? = nil, scattered: Bool = false,
        objects: [StoredObject] = [], distanceKm: Double? = nil, hidesLocation: Bool = false
    ) {
        self.hidesLocation = hidesLocation
        self.bucket = bucket
        self.id = id
        self.owner = owner
        self.objectCount = objectCount
        self.name = name
        self.description = description
        self.location = location
        self.place = place
        self.cityOverride = cityOverride
        self.scattered = scattered
        self.objects = objects
        self.distanceKm = distanceKm
    }
}

/// What the owner may change on a spot. `nil` leaves a field as it is; an empty string clears it.
public struct SpotChanges: Sendable, Equatable {
    public var name: String?
    public var description: String?
    /// Replaces the geocoded city; an empty string goes back to geocoding.
    public var city: String?
    /// Hides (or shows again) the exact position from everyone but the owner.
    public var hidesLocation: Bool?

    public init(name: String? = nil, description: String? = nil, city: String? = nil, hidesLocation: Bool? = nil) {
        self.hidesLocation = hidesLocation
        self.name = name
        self.description = description
        self.city = city
    }
}

/// A search for spots in one bucket.
public struct SpotQuery: Sendable, Equatable {
    public enum Criterion: Sendable, Equatable {
        /// Spots whose (effective) city matches, ignoring case and accents ("sao paulo" finds São Paulo).
        case city(String)
        /// Spots whose location is within `radiusKm` of the point, nearest first.
        case near(latitude: Double, longitude: Double, radiusKm: Double)
    }

    public var bucket: String
    public var criterion: Criterion
    /// The `nextPageToken` of the previous page.
    public var pageToken: String?
    /// 1…`ListQuery.maxPageSize`.
    public var maxResults: Int

    public init(bucket: String, criterion: Criterion, pageToken: String? = nil, maxResults: Int = 100) {
        self.bucket = bucket
        self.criterion = criterion
        self.pageToken = pageToken
        self.maxResults = maxResults
    }
}

/// One page of spots; `nextPageToken` is `nil` on the last page.
public struct SpotPage: Sendable, Equatable {
    public var spots: [SpotDetails]
    public var nextPageToken: String?

    public init(spots: [SpotDetails], nextPageToken: String?) {
        self.spots = spots
        self.nextPageToken = nextPageToken
    }
}

/// Folds a city name for matching: lowercased, accents removed, spaces collapsed
/// ("  São   Paulo" → "sao paulo").
public func cityKey(_ city: String) -> String {
    city.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        .split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
}

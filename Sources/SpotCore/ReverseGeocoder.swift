/// Where a position is, in words a person would write on a postcard.
public struct Place: Sendable, Codable, Equatable {
    /// The city, town or village; `nil` far from any place (open ocean, polar ice).
    public var city: String?
    /// The first-level administrative division (state, region, province), when known.
    public var region: String?
    /// The country's English name, when one applies.
    public var country: String?
    /// ISO 3166-1 alpha-2, when a country applies.
    public var countryCode: String?
    /// Great-circle distance from the position to the named city's centre, in km (`nil` without a city).
    public var distanceKm: Double?

    public init(city: String? = nil, region: String? = nil, country: String? = nil, countryCode: String? = nil, distanceKm: Double? = nil) {
        self.city = city
        self.region = region
        self.country = country
        self.countryCode = countryCode
        self.distanceKm = distanceKm
    }
}

/// Turns a position into a `Place`, offline.
///
/// Invalid positions are no location, never a place: NaN or infinite values,
/// |latitude| > 90, |longitude| > 180, and the (0, 0) "null island" broken cameras write
/// all answer `nil`. A valid position far from any place answers a `Place` without a city
/// (with a country only where one applies).
public protocol ReverseGeocoder: Sendable {
    /// The place at `latitude`, `longitude` (WGS 84 degrees), or `nil` for an invalid position.
    func place(latitude: Double, longitude: Double) -> Place?
}

extension GeoPoint {
    /// Whether this is a real position: finite, within range, and not (0, 0).
    public var isValidPosition: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
            && !(latitude == 0 && longitude == 0)
    }
}

import SpotCore

/// A spot as the API shows it: name, location with its place, city, photo count and the
/// photos' thumbnail URLs.
public struct SpotResource: Codable, Sendable {
    public struct Photo: Codable, Sendable {
        public let name: String
        public let url: String
        public let thumbnails: [String: String]?
    }

    public let id: String
    public let bucket: String
    public let owner: String
    public let name: String?
    public let description: String?
    /// The effective city: the owner's override, else the geocoded one.
    public let city: String?
    /// True when the owner set the city.
    public let cityOverridden: Bool
    public let location: ObjectResource.Location?
    /// True when the spot's photos are more than 1 km apart; `location` is the first photo's.
    public let scattered: Bool
    public let photoCount: Int
    /// The first photo's thumbnails, to show the spot with.
    public let thumbnails: [String: String]?
    public let photos: [Photo]
    /// For `near` searches: the distance from the query point.
    public let distanceKm: Double?
    /// True when the owner hid the exact position: others see the city only.
    public let locationHidden: Bool

    public init(_ spot: SpotDetails, baseURL: String) {
        id = spot.id
        bucket = spot.bucket
        owner = spot.owner
        name = spot.name
        description = spot.description
        city = spot.place?.city
        cityOverridden = spot.cityOverride != nil
        location = ObjectResource.Location(spot.location, place: spot.place)
        scattered = spot.scattered
        photoCount = spot.objectCount
        photos = spot.objects.map {
            Photo(name: $0.path.name, url: ObjectResource.url(of: $0.path, baseURL: baseURL),
                  thumbnails: ObjectResource.thumbnailURLs(of: $0, baseURL: baseURL))
        }
        thumbnails = photos.lazy.compactMap(\.thumbnails).first
        distanceKm = spot.distanceKm.map { ($0 * 1000).rounded() / 1000 }
        locationHidden = spot.hidesLocation
    }
}

/// A page of spots: `{spots, nextPageToken}`.
public struct SpotPageResource: Codable, Sendable {
    public let spots: [SpotResource]
    public let nextPageToken: String?

    public init(spots: [SpotResource], nextPageToken: String?) {
        self.spots = spots
        self.nextPageToken = nextPageToken
    }
}

/// The body of `PATCH /v0/b/{bucket}/spots/{spotId}`; absent fields stay, `""` clears.
public struct SpotChangesBody: Codable, Sendable {
    public let name: String?
    public let description: String?
    public let city: String?
    public let hideLocation: Bool?
}

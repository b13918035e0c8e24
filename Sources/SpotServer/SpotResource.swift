import SpotCore

/// A spot as the API shows it: name, location with its place, city, photo count and the
/// photos' thumbnail URLs.
struct SpotResource: Encodable {
    struct Photo: Encodable {
        let name: String
        let url: String
        let thumbnails: [String: String]?
    }

    let id: String
    let bucket: String
    let owner: String
    let name: String?
    let description: String?
    /// The effective city: the owner's override, else the geocoded one.
    let city: String?
    /// True when the owner set the city.
    let cityOverridden: Bool
    let location: ObjectResource.Location?
    /// True when the spot's photos are more than 1 km apart; `location` is the first photo's.
    let scattered: Bool
    let photoCount: Int
    /// The first photo's thumbnails, to show the spot with.
    let thumbnails: [String: String]?
    let photos: [Photo]
    /// For `near` searches: the distance from the query point.
    let distanceKm: Double?
    /// True when the owner hid the exact position: others see the city only.
    let locationHidden: Bool

    init(_ spot: SpotDetails, baseURL: String) {
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
struct SpotPageResource: Encodable {
    let spots: [SpotResource]
    let nextPageToken: String?
}

/// The body of `PATCH /v0/b/{bucket}/spots/{spotId}`; absent fields stay, `""` clears.
struct SpotChangesBody: Decodable {
    let name: String?
    let description: String?
    let city: String?
    let hideLocation: Bool?
}

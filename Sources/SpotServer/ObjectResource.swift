import Access
import Foundation
import SpotCore

/// An object's metadata as the API shows it (Firebase Storage's field names, plus photo
/// and thumbnail fields).
struct ObjectResource: Encodable {
    struct Photo: Encodable {
        struct Camera: Encodable {
            let make: String?
            let model: String?
        }
        let width: Int
        let height: Int
        let orientation: Int
        let takenAt: String?
        let camera: Camera?
        let location: Location?
    }

    /// A position with the place it names: `{latitude, longitude, altitude, city, region,
    /// country, countryCode, distanceKm}`; only the place when the position is hidden.
    struct Location: Encodable {
        let latitude: Double?
        let longitude: Double?
        let altitude: Double?
        let city: String?
        let region: String?
        let country: String?
        let countryCode: String?
        let distanceKm: Double?

        init?(_ point: GeoPoint?, place: Place?) {
            guard point != nil || place != nil else { return nil }
            latitude = point.map { Self.rounded($0.latitude) }
            longitude = point.map { Self.rounded($0.longitude) }
            altitude = point?.altitude.map(Self.rounded)
            city = place?.city
            region = place?.region
            country = place?.country
            countryCode = place?.countryCode
            distanceKm = place?.distanceKm.map { ($0 * 100).rounded() / 100 }
        }

        /// `value` to 7 decimals (about 1 cm), so a coordinate prints as written
        /// (`2.2945`, not the `2.2944999999999998` its binary value would print as).
        static func rounded(_ value: Double) -> Double {
            (value * 1e7).rounded() / 1e7
        }
    }

    let name: String
    let bucket: String
    let size: Int64
    let contentType: String
    let sha256: String
    let owner: String
    let timeCreated: Date
    let updated: Date
    let downloadUrl: String
    let photo: Photo?
    let thumbnails: [String: String]?

    /// - Parameter baseURL: `http://host:port`, with no trailing slash.
    init(_ object: StoredObject, baseURL: String) {
        let objectURL = Self.url(of: object.path, baseURL: baseURL)
        name = object.path.name
        bucket = object.path.bucket
        size = object.size
        contentType = object.contentType
        sha256 = object.digest.hex
        owner = object.owner
        timeCreated = object.createdAt
        updated = object.updatedAt
        downloadUrl = "\(objectURL)?alt=media"
        photo = object.photo.map { photo in
            Photo(
                width: photo.width, height: photo.height, orientation: photo.orientation, takenAt: photo.takenAt,
                camera: photo.cameraMake == nil && photo.cameraModel == nil ? nil : .init(make: photo.cameraMake, model: photo.cameraModel),
                location: Location(photo.location, place: photo.place))
        }
        thumbnails = Self.thumbnailURLs(of: object, baseURL: baseURL)
    }

    /// `{base}/v0/b/{bucket}/o/{encoded name}`.
    static func url(of path: ObjectPath, baseURL: String) -> String {
        "\(baseURL)/v0/b/\(path.bucket)/o/\(ObjectPath.urlSegment(path.name))"
    }

    /// `{"256": url, "1024": url}`, or `nil` without thumbnails.
    static func thumbnailURLs(of object: StoredObject, baseURL: String) -> [String: String]? {
        let objectURL = url(of: object.path, baseURL: baseURL)
        return object.thumbnails.isEmpty ? nil : Dictionary(
            uniqueKeysWithValues: object.thumbnails.map { (String($0.size), "\(objectURL)?alt=thumbnail&size=\($0.size)") })
    }
}

/// A listing page: `{prefixes, items, nextPageToken}`.
struct ListResource: Encodable {
    let prefixes: [String]
    let items: [ObjectResource]
    let nextPageToken: String?
}

/// A new download token, shown once: `{id, token, url, timeCreated}`.
struct NewDownloadTokenResource: Encodable {
    let id: String
    let token: String
    let url: String
    let timeCreated: Date
}

/// An object's live download tokens: `{tokens: [{id, timeCreated}]}`.
struct DownloadTokensResource: Encodable {
    struct Token: Encodable {
        let id: String
        let timeCreated: Date
    }
    let tokens: [Token]
}

/// A signed download URL: `{url, expires}`.
struct SignedURLResource: Encodable {
    let url: String
    let expires: Date
}

/// The body of `POST /v0/b/{bucket}/digests`.
struct DigestCheckBody: Decodable {
    let digests: [String]
    let probe: String?
}

/// The answer of `POST /v0/b/{bucket}/digests`: `{present: {digest: [names]}, limits}`.
struct DigestCheckResource: Encodable {
    let present: [String: [String]]
    let limits: LimitsResource?
}

/// Upload limits: `{maxBytes, maxObjectsPerSpot, contentTypes, thumbnails}`.
struct LimitsResource: Encodable {
    let maxBytes: Int64
    let maxObjectsPerSpot: Int?
    let contentTypes: [String]?
    let thumbnails: Bool

    init(_ limits: UploadLimits) {
        maxBytes = limits.maxBytes
        maxObjectsPerSpot = limits.maxObjectsPerSpot
        contentTypes = limits.allowedContentTypes?.sorted()
        thumbnails = limits.makesThumbnails
    }
}

import Foundation
import SpotCore

/// An object's metadata as the API shows it (Firebase Storage's field names, plus photo
/// and thumbnail fields).
public struct ObjectResource: Codable, Sendable {
    public struct Photo: Codable, Sendable {
        public struct Camera: Codable, Sendable {
            public let make: String?
            public let model: String?
        }
        public let width: Int
        public let height: Int
        public let orientation: Int
        public let takenAt: String?
        public let camera: Camera?
        public let location: Location?
    }

    /// A position with the place it names: `{latitude, longitude, altitude, city, region,
    /// country, countryCode, distanceKm}`; only the place when the position is hidden.
    public struct Location: Codable, Sendable {
        public let latitude: Double?
        public let longitude: Double?
        public let altitude: Double?
        public let city: String?
        public let region: String?
        public let country: String?
        public let countryCode: String?
        public let distanceKm: Double?

        public init?(_ point: GeoPoint?, place: Place?) {
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
        public static func rounded(_ value: Double) -> Double {
            (value * 1e7).rounded() / 1e7
        }
    }

    public let name: String
    public let bucket: String
    public let size: Int64
    public let contentType: String
    public let sha256: String
    public let owner: String
    public let timeCreated: Date
    public let updated: Date
    public let downloadUrl: String
    public let photo: Photo?
    public let thumbnails: [String: String]?
    /// Firebase's fields: the version of the bytes and of the metadata (decimal strings),
    /// the MD5 (base64; absent for objects stored before it was recorded), the header
    /// settings, custom `metadata`, and `downloadTokens` (what `getDownloadURL()` reads).
    public let generation: String
    public let metageneration: String
    public let md5Hash: String?
    public let cacheControl: String?
    public let contentDisposition: String?
    public let contentEncoding: String?
    public let contentLanguage: String?
    public let metadata: [String: String]?
    public let downloadTokens: String?

    /// - Parameters:
    ///   - baseURL: `http://host:port`, with no trailing slash.
    ///   - downloadToken: the token readers see, if any.
    public init(_ object: StoredObject, baseURL: String, downloadToken: String? = nil) {
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
        generation = String(object.generation)
        metageneration = String(object.metageneration)
        md5Hash = object.md5.map { Data($0).base64EncodedString() }
        cacheControl = object.settings.cacheControl
        contentDisposition = object.settings.contentDisposition
        contentEncoding = object.settings.contentEncoding
        contentLanguage = object.settings.contentLanguage
        metadata = object.settings.custom.isEmpty ? nil : object.settings.custom
        downloadTokens = downloadToken
    }

    /// `{base}/v0/b/{bucket}/o/{encoded name}`.
    public static func url(of path: ObjectPath, baseURL: String) -> String {
        "\(baseURL)/v0/b/\(path.bucket)/o/\(ObjectPath.urlSegment(path.name))"
    }

    /// `{"256": url, "1024": url}` of the standard (JPEG or PNG) thumbnails, or `nil` without
    /// thumbnails; `&format=webp` on a URL asks for the WebP one.
    public static func thumbnailURLs(of object: StoredObject, baseURL: String) -> [String: String]? {
        let objectURL = url(of: object.path, baseURL: baseURL)
        let standard = object.thumbnails.filter { !$0.isWebP }
        return standard.isEmpty ? nil : Dictionary(
            uniqueKeysWithValues: standard.map { (String($0.size), "\(objectURL)?alt=thumbnail&size=\($0.size)") })
    }
}

/// A listing page: `{prefixes, items, nextPageToken}`.
public struct ListResource: Codable, Sendable {
    public let prefixes: [String]
    public let items: [ObjectResource]
    public let nextPageToken: String?

    public init(prefixes: [String], items: [ObjectResource], nextPageToken: String?) {
        self.prefixes = prefixes
        self.items = items
        self.nextPageToken = nextPageToken
    }
}


import Foundation

/// A position in WGS 84 degrees; altitude in metres above sea level when known.
public struct GeoPoint: Sendable, Codable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double?

    public init(latitude: Double, longitude: Double, altitude: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }
}

/// What a photo says about itself: pixel size and EXIF. Unknown fields are `nil`.
public struct PhotoMetadata: Sendable, Codable, Equatable {
    /// Stored pixel width and height (before orientation is applied).
    public var width: Int
    public var height: Int
    /// EXIF orientation 1…8; 1 when absent or invalid.
    public var orientation: Int
    /// DateTimeOriginal as written by the camera, ISO 8601 without zone (`2023-05-01T14:03:22`).
    public var takenAt: String?
    public var cameraMake: String?
    public var cameraModel: String?
    /// The GPS position; `nil` when absent or invalid (see `GeoPoint.isValidPosition`).
    public var location: GeoPoint?
    /// Where `location` is, reverse-geocoded offline; `nil` without a location.
    public var place: Place?

    public init(
        width: Int, height: Int, orientation: Int = 1, takenAt: String? = nil,
        cameraMake: String? = nil, cameraModel: String? = nil, location: GeoPoint? = nil, place: Place? = nil
    ) {
        self.width = width
        self.height = height
        self.orientation = orientation
        self.takenAt = takenAt
        self.cameraMake = cameraMake
        self.cameraModel = cameraModel
        self.location = location
        self.place = place
    }
}

/// A thumbnail of a blob; the thumbnail is a blob too. A blob has one per size in the
/// standard format (JPEG, PNG for images with alpha) and may have one per size in WebP.
public struct Thumbnail: Sendable, Codable, Equatable {
    /// The requested long edge (256, 1024); `width`/`height` are the actual pixels.
    public var size: Int
    public var digest: Digest
    public var width: Int
    public var height: Int
    public var byteCount: Int
    public var contentType: String

    /// The content type of WebP thumbnails.
    public static let webPContentType = "image/webp"

    /// Whether this is a WebP thumbnail rather than the standard one of its size.
    public var isWebP: Bool { contentType == Self.webPContentType }

    public init(size: Int, digest: Digest, width: Int, height: Int, byteCount: Int, contentType: String) {
        self.size = size
        self.digest = digest
        self.width = width
        self.height = height
        self.byteCount = byteCount
        self.contentType = contentType
    }
}

/// A user of the store. Tokens are kept apart, as SHA-256 digests only.
public struct User: Sendable, Equatable {
    public var uid: String
    public var createdAt: Date
    /// How many live tokens the user has; 0 after `revoke`.
    public var tokenCount: Int
    /// What the access rules read as `request.auth.token.<key>` (`admin` → `"true"`), over
    /// the claims of the ID token the request signed in with.
    public var claims: [String: String]
    /// The identity provider the user last signed in through with an ID token (`nil` for
    /// users who only ever had SpotStore's own tokens).
    public var provider: String?
    /// When the user last signed in with an ID token (recorded at most once an hour).
    public var lastSignInAt: Date?
    /// When `revoke` last ran: ID tokens issued before it are refused.
    public var revokedAt: Date?
    /// Whether the user may call the admin API (granted only from the command line).
    public var isAdmin: Bool
    /// How many times the download tokens on the user's objects were replaced (`users
    /// revoke --download-tokens`); part of what the token made on upload is derived from.
    public var downloadTokenEpoch: Int
    /// The ID token this request signed in with, its claims and expiry; `nil` for
    /// SpotStore's own tokens and as the catalog returns users.
    public var idToken: VerifiedIdentity?

    public init(
        uid: String, createdAt: Date, tokenCount: Int, claims: [String: String] = [:], provider: String? = nil,
        lastSignInAt: Date? = nil, revokedAt: Date? = nil, isAdmin: Bool = false, downloadTokenEpoch: Int = 0,
        idToken: VerifiedIdentity? = nil
    ) {
        self.downloadTokenEpoch = downloadTokenEpoch
        self.uid = uid
        self.createdAt = createdAt
        self.tokenCount = tokenCount
        self.claims = claims
        self.provider = provider
        self.lastSignInAt = lastSignInAt
        self.revokedAt = revokedAt
        self.isAdmin = isAdmin
        self.idToken = idToken
    }

    /// Claim keys are 1–64 ASCII letters, digits and `_`, not starting with a digit
    /// (so the rules can name them: `request.auth.token.admin`); values at most 256 bytes.
    public static func validate(claim key: String, value: String?) throws(SpotError) {
        guard (1...64).contains(key.utf8.count), let first = key.utf8.first, !(48...57).contains(first),
              key.utf8.allSatisfy({ (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) || $0 == 95 })
        else { throw SpotError(.badRequest, "'\(key)' is not a valid claim name: use 1-64 letters, digits or '_', not starting with a digit") }
        if let value, value.utf8.count > 256 {
            throw SpotError(.badRequest, "the value of claim '\(key)' has \(value.utf8.count) bytes; at most 256 are allowed")
        }
    }

    /// Uids are 1–64 ASCII letters, digits, `-` and `_`.
    public static func validate(uid: String) throws(SpotError) {
        guard (1...64).contains(uid.utf8.count),
              uid.utf8.allSatisfy({ (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) || $0 == 45 || $0 == 95 })
        else { throw SpotError(.badRequest, "'\(uid)' is not a valid uid: use 1-64 letters, digits, '-' or '_'") }
    }
}

/// A spot (a folder directly under a bucket) as the policy needs to see it.
public struct SpotState: Sendable, Equatable {
    public var bucket: String
    public var id: String
    /// The user who created the spot's first object.
    public var owner: String
    /// Objects currently in the spot.
    public var objectCount: Int
    /// Whether the owner hid the spot's exact position from everyone else.
    public var hidesLocation: Bool

    public init(bucket: String, id: String, owner: String, objectCount: Int, hidesLocation: Bool = false) {
        self.bucket = bucket
        self.id = id
        self.owner = owner
        self.objectCount = objectCount
        self.hidesLocation = hidesLocation
    }
}

/// An object to commit: the blob (and thumbnails) are already in the blob store.
public struct NewObject: Sendable, Equatable {
    public var path: ObjectPath
    public var digest: Digest
    public var size: Int64
    public var contentType: String
    public var owner: String
    public var photo: PhotoMetadata?
    public var thumbnails: [Thumbnail]
    /// The lease held on the blob and thumbnails since before they were stored; the commit
    /// releases it. `nil` for blobs something already names.
    public var lease: LeaseID?
    /// The MD5 of the bytes (16 bytes), for Firebase's `md5Hash`.
    public var md5: [UInt8]?
    public var settings: ObjectSettings
    /// Names this version of the object's bytes (microseconds since 1970 at upload); stored as given.
    public var generation: Int64
    /// A download token (its SHA-256) the commit records for the new object, or `nil`.
    public var downloadTokenDigest: Digest?
    /// The owner's download-token epoch the token was made with (`UserCatalog`): the commit
    /// is refused when the owner's tokens were replaced since.
    public var downloadTokenEpoch = 0
    /// The upload session this commit completes: it must still exist, does not count against
    /// the spot's limit, and is removed in the same transaction.
    public var uploadSession: String?
    /// The object's bytes, when the blob store keeps blobs this small in the catalog
    /// (`CatalogKeptBlobs`): the commit stores them as blob `digest`, with no lease.
    public var smallBlob: [UInt8]?

    public init(
        path: ObjectPath, digest: Digest, size: Int64, contentType: String, owner: String,
        photo: PhotoMetadata? = nil, thumbnails: [Thumbnail] = [], lease: LeaseID? = nil, md5: [UInt8]? = nil,
        settings: ObjectSettings = ObjectSettings(), generation: Int64 = 0, downloadTokenDigest: Digest? = nil,
        uploadSession: String? = nil
    ) {
        self.lease = lease
        self.md5 = md5
        self.settings = settings
        self.generation = generation
        self.downloadTokenDigest = downloadTokenDigest
        self.uploadSession = uploadSession
        self.path = path
        self.digest = digest
        self.size = size
        self.contentType = contentType
        self.owner = owner
        self.photo = photo
        self.thumbnails = thumbnails
    }
}

/// A committed object with everything the API reports about it.
public struct StoredObject: Sendable, Equatable {
    public var path: ObjectPath
    public var digest: Digest
    public var size: Int64
    public var contentType: String
    public var owner: String
    public var createdAt: Date
    public var updatedAt: Date
    public var photo: PhotoMetadata?
    /// Sorted by `size`.
    public var thumbnails: [Thumbnail]
    /// The MD5 of the bytes; `nil` for objects stored before SpotStore recorded it.
    public var md5: [UInt8]?
    public var settings: ObjectSettings
    /// As committed (`NewObject.generation`); a new upload to the path gets a new one.
    public var generation: Int64
    /// 1 at upload, one more at each metadata update.
    public var metageneration: Int64

    public init(
        path: ObjectPath, digest: Digest, size: Int64, contentType: String, owner: String,
        createdAt: Date, updatedAt: Date, photo: PhotoMetadata? = nil, thumbnails: [Thumbnail] = [],
        md5: [UInt8]? = nil, settings: ObjectSettings = ObjectSettings(), generation: Int64 = 0, metageneration: Int64 = 1
    ) {
        self.md5 = md5
        self.settings = settings
        self.generation = generation
        self.metageneration = metageneration
        self.path = path
        self.digest = digest
        self.size = size
        self.contentType = contentType
        self.owner = owner
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.photo = photo
        self.thumbnails = thumbnails
    }
}

/// A listing request in Firebase Storage's shape.
public struct ListQuery: Sendable, Equatable {
    /// The most `maxResults` may be.
    public static let maxPageSize = 1000

    public var bucket: String
    /// Only names starting with this (may be empty).
    public var prefix: String
    /// With `/`, names below the next `/` after `prefix` are folded into `prefixes`.
    public var delimiter: String?
    /// The `nextPageToken` of the previous page, if any.
    public var pageToken: String?
    /// 1…`maxPageSize` entries (prefixes plus items) per page.
    public var maxResults: Int

    public init(bucket: String, prefix: String = "", delimiter: String? = nil, pageToken: String? = nil, maxResults: Int = ListQuery.maxPageSize) {
        self.bucket = bucket
        self.prefix = prefix
        self.delimiter = delimiter
        self.pageToken = pageToken
        self.maxResults = maxResults
    }
}

/// One page of a listing: folder prefixes (ending in the delimiter) and objects, both in name order.
public struct Listing: Sendable, Equatable {
    public var prefixes: [String]
    public var items: [StoredObject]
    /// `nil` on the last page.
    public var nextPageToken: String?

    public init(prefixes: [String], items: [StoredObject], nextPageToken: String?) {
        self.prefixes = prefixes
        self.items = items
        self.nextPageToken = nextPageToken
    }
}

/// A Firebase-style download token of an object, as its owner sees it: the token itself
/// is shown once, when made, and stored only as its SHA-256.
public struct DownloadToken: Sendable, Equatable {
    /// Names the token for `revoke`: the first 16 hex digits of its digest.
    public var id: String
    public var createdAt: Date

    public init(id: String, createdAt: Date) {
        self.id = id
        self.createdAt = createdAt
    }
}

import Foundation
import Media
import SpotCore

/// What `spotstore ingest` looks for and how it groups photos into spots.
public struct IngestOptions: Sendable {
    public enum Grouping: Sendable, Equatable {
        /// Each folder holding photos is a spot; its id is a slug of the folder's path.
        case folder
        /// Photos within `radiusMeters` of each other form a spot; its id is the city and a
        /// short geohash. Photos without GPS are reported, not uploaded.
        case location(radiusMeters: Double)
    }

    /// The folder to ingest.
    public var root: String
    public var includeHidden: Bool
    /// Glob patterns (fnmatch, matched against the path relative to `root` and against the
    /// file or folder name); a match is skipped.
    public var excludes: [String]
    public var grouping: Grouping
    /// Split a group larger than the spot limit into numbered spots instead of refusing its extra photos.
    public var split: Bool

    public init(root: String, includeHidden: Bool = false, excludes: [String] = [], grouping: Grouping = .folder, split: Bool = false) {
        self.root = root
        self.includeHidden = includeHidden
        self.excludes = excludes
        self.grouping = grouping
        self.split = split
    }
}

/// A photo found under the root: recognised by its bytes, hashed, its GPS read.
public struct FoundPhoto: Sendable, Equatable {
    /// Relative to the root, `/`-separated.
    public var relativePath: String
    public var absolutePath: String
    public var size: Int64
    public var format: ImageFormat
    public var digest: Digest
    /// The EXIF GPS position when valid (see `GeoPoint.isValidPosition`).
    public var location: GeoPoint?

    public init(relativePath: String, absolutePath: String, size: Int64, format: ImageFormat, digest: Digest, location: GeoPoint?) {
        self.relativePath = relativePath
        self.absolutePath = absolutePath
        self.size = size
        self.format = format
        self.digest = digest
        self.location = location
    }
}

/// Why a file is not considered at all.
public enum SkipReason: String, Sendable, CaseIterable, Codable {
    case hidden = "hidden"
    case excluded = "excluded"
    case notAnImage = "not a JPEG, PNG, HEIC/HEIF, AVIF or WebP photo"
    case empty = "empty file"
    case outsideSymlink = "symlink leading out of the folder"
    case unreadable = "unreadable"
    case duplicate = "same bytes as another file"
    /// A symlink to a folder that is walked already (through its real path or another
    /// link), including every symlink loop; `detail` names the folder walked.
    case alreadyWalked = "symlink to a folder already walked"
}

/// A file left out, with why (and, for duplicates, which file it repeats).
public struct SkippedFile: Sendable, Equatable {
    public var relativePath: String
    public var reason: SkipReason
    public var detail: String?

    public init(relativePath: String, reason: SkipReason, detail: String? = nil) {
        self.relativePath = relativePath
        self.reason = reason
        self.detail = detail
    }
}

/// What a scan found, both in relative-path order.
public struct Scan: Sendable, Equatable {
    public var photos: [FoundPhoto]
    public var skipped: [SkippedFile]

    public init(photos: [FoundPhoto], skipped: [SkippedFile]) {
        self.photos = photos
        self.skipped = skipped
    }
}

/// One photo to store at `spotID/name` in the bucket.
public struct PlannedUpload: Sendable, Equatable {
    public var photo: FoundPhoto
    public var spotID: String
    /// The object name: `spotID/fileName`.
    public var name: String
    /// The spot's city, when the photo's position names one (location grouping).
    public var city: String?

    public init(photo: FoundPhoto, spotID: String, name: String, city: String? = nil) {
        self.photo = photo
        self.spotID = spotID
        self.name = name
        self.city = city
    }
}

/// A photo the plan does not upload, and why, in words a person can act on.
public struct RefusedPhoto: Sendable, Equatable {
    public enum Reason: String, Sendable, Codable {
        case noPosition = "no GPS position"
        case spotFull = "spot limit"
        case tooLarge = "over the size limit"
        case notAllowed = "type not allowed"
    }
    public var photo: FoundPhoto
    public var reason: Reason
    public var detail: String

    public init(photo: FoundPhoto, reason: Reason, detail: String) {
        self.photo = photo
        self.reason = reason
        self.detail = detail
    }
}

/// The deterministic plan of an ingest: the same files always give the same plan.
public struct IngestPlan: Sendable, Equatable {
    /// In spot id, then name order.
    public var uploads: [PlannedUpload]
    public var refused: [RefusedPhoto]

    public init(uploads: [PlannedUpload], refused: [RefusedPhoto]) {
        self.uploads = uploads
        self.refused = refused
    }
}

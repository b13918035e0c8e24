import SpotCore

/// What a request wants to do.
public enum Operation: String, Sendable, CaseIterable {
    /// Read an object's metadata, bytes or thumbnails.
    case read
    /// List names under a prefix (`name` is the prefix).
    case list
    /// Create or replace an object.
    case write
    /// Delete an object.
    case delete
}

/// Everything a policy may look at to decide.
public struct AccessRequest: Sendable, Equatable {
    /// The authenticated user.
    public var uid: String
    public var operation: Operation
    public var bucket: String
    /// The object name; for `.list`, the prefix (may be empty).
    public var name: String
    /// The spot the object is in (folder directly under the bucket), when one exists yet.
    public var spot: SpotState?

    public init(uid: String, operation: Operation, bucket: String, name: String, spot: SpotState? = nil) {
        self.uid = uid
        self.operation = operation
        self.bucket = bucket
        self.name = name
        self.spot = spot
    }
}

/// Limits an allowed write must respect; the upload coordinator enforces them before
/// and while the body is read, and the catalog re-checks the spot count on commit.
public struct UploadLimits: Sendable, Equatable {
    /// The most bytes one object may have.
    public var maxBytes: Int64
    /// The most objects a spot may hold; `nil` when objects here are not in spots.
    public var maxObjectsPerSpot: Int?
    /// Accepted content types, judged by the bytes; `nil` accepts any.
    public var allowedContentTypes: Set<String>?
    /// Whether images get thumbnails (and must therefore decode).
    public var makesThumbnails: Bool

    public init(maxBytes: Int64, maxObjectsPerSpot: Int? = nil, allowedContentTypes: Set<String>? = nil, makesThumbnails: Bool = true) {
        self.maxBytes = maxBytes
        self.maxObjectsPerSpot = maxObjectsPerSpot
        self.allowedContentTypes = allowedContentTypes
        self.makesThumbnails = makesThumbnails
    }
}

/// Decides every request: deny unless a rule allows. The rules engine implements this
/// same protocol.
public protocol AccessPolicy: Sendable {
    /// Allows the request, returning the limits that apply to a `.write` (`nil` for other
    /// operations), or throws `SpotError(.forbidden)` with a reason a person can act on.
    func authorize(_ request: AccessRequest) throws(SpotError) -> UploadLimits?
}

import Access
import Foundation

/// A new download token, shown once: `{id, token, url, timeCreated}`.
public struct NewDownloadTokenResource: Codable, Sendable {
    public let id: String
    public let token: String
    public let url: String
    public let timeCreated: Date

    public init(id: String, token: String, url: String, timeCreated: Date) {
        self.id = id
        self.token = token
        self.url = url
        self.timeCreated = timeCreated
    }
}

/// An object's live download tokens: `{tokens: [{id, timeCreated}]}`.
public struct DownloadTokensResource: Codable, Sendable {
    public struct Token: Codable, Sendable {
        public let id: String
        public let timeCreated: Date

        public init(id: String, timeCreated: Date) {
            self.id = id
            self.timeCreated = timeCreated
        }
    }
    public let tokens: [Token]

    public init(tokens: [Token]) {
        self.tokens = tokens
    }
}

/// A signed download URL: `{url, expires}`.
public struct SignedURLResource: Codable, Sendable {
    public let url: String
    public let expires: Date

    public init(url: String, expires: Date) {
        self.url = url
        self.expires = expires
    }
}

/// The body of `POST /v0/b/{bucket}/digests`: `{digests: [hex], probe}`.
public struct DigestCheckBody: Codable, Sendable {
    public let digests: [String]
    public let probe: String?

    public init(digests: [String], probe: String?) {
        self.digests = digests
        self.probe = probe
    }
}

/// The answer of `POST /v0/b/{bucket}/digests`: `{present: {digest: [names]}, limits}`.
public struct DigestCheckResource: Codable, Sendable {
    public let present: [String: [String]]
    public let limits: LimitsResource?

    public init(present: [String: [String]], limits: LimitsResource?) {
        self.present = present
        self.limits = limits
    }
}

/// Upload limits: `{maxBytes, maxObjectsPerSpot, contentTypes, thumbnails, downloadTokens}`.
public struct LimitsResource: Codable, Sendable {
    public let maxBytes: Int64
    public let maxObjectsPerSpot: Int?
    public let contentTypes: [String]?
    public let thumbnails: Bool
    /// Absent from servers older than download tokens in metadata: then on.
    public let downloadTokens: Bool?

    public init(_ limits: UploadLimits) {
        maxBytes = limits.maxBytes
        maxObjectsPerSpot = limits.maxObjectsPerSpot
        contentTypes = limits.allowedContentTypes?.sorted()
        thumbnails = limits.makesThumbnails
        downloadTokens = limits.makesDownloadToken
    }

    /// The limits these fields describe.
    public var limits: UploadLimits {
        UploadLimits(maxBytes: maxBytes, maxObjectsPerSpot: maxObjectsPerSpot,
                     allowedContentTypes: contentTypes.map(Set.init), makesThumbnails: thumbnails,
                     makesDownloadToken: downloadTokens ?? true)
    }
}

import Foundation
import SpotCore

/// `POST /v0/session` with a one-time sign-in link: `{"link": "ssl_…"}`.
public struct SignInLinkBody: Codable, Sendable {
    public let link: String

    public init(link: String) {
        self.link = link
    }
}

/// The signed-in console user: `{user, expiresAt}` (`expiresAt` once a session began;
/// without `user` for someone not signed in).
public struct SessionResource: Codable, Sendable {
    public let user: UserResource?
    public let expiresAt: Date?

    public init(user: User?, expiresAt: Date?) {
        self.user = user.map(UserResource.init)
        self.expiresAt = expiresAt
    }
}

/// `POST /v0/b/{bucket}/spots/{spotId}/shares`: `{"expiresIn": seconds}` (optional).
public struct NewSpotShareBody: Codable, Sendable {
    public let expiresIn: Double?

    public init(expiresIn: Double?) {
        self.expiresIn = expiresIn
    }
}

/// A spot's share link: `{id, spot, createdBy, createdAt, expiresAt}`, with `url` (the
/// page with the link's secret) only when it was just made.
public struct SpotShareResource: Codable, Sendable {
    public let id: String
    public let spot: String
    public let createdBy: String
    public let createdAt: Date
    public let expiresAt: Date
    public let url: String?

    public init(_ share: SpotShare, url: String? = nil) {
        id = share.id
        spot = share.spotId
        createdBy = share.createdBy
        createdAt = share.createdAt
        expiresAt = share.expiresAt
        self.url = url
    }

    /// The page of spot `spotId` in `bucket` under `baseURL`, with `secret` when given.
    public static func pageURL(bucket: String, spotId: String, secret: String?, baseURL: String) -> String {
        "\(baseURL)/s/\(ObjectPath.urlSegment(bucket))/\(ObjectPath.urlSegment(spotId))" + (secret.map { "?share=\($0)" } ?? "")
    }
}

/// A spot's live share links: `{shares}`.
public struct SpotSharesResource: Codable, Sendable {
    public let shares: [SpotShareResource]

    public init(shares: [SpotShareResource]) {
        self.shares = shares
    }
}

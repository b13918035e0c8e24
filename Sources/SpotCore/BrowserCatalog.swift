import Foundation

/// What a browser holds: console sessions, the one-time sign-in links that start them, and
/// links that show a spot to anyone holding them. Each secret is kept only as its SHA-256
/// digest; each is gone with its user (and a session or share link with the user's
/// revocation: one made before `User.revokedAt` is dead).
public protocol BrowserCatalog: Sendable {
    /// Records a session of `uid` whose secret has `digest`, made at `createdAt`, live
    /// until `expiresAt`; forgets the user's sessions that expired before `createdAt`, and
    /// all but the newest `maxSessionsPerUser`. Returns `false` when there is no such user.
    func addSession(_ digest: Digest, of uid: String, createdAt: Date, expiresAt: Date) async throws -> Bool

    /// The user of the session whose secret has `digest`, with its claims, when that session
    /// is live at `now` and was made after the user's tokens were last revoked; else `nil`.
    func user(sessionDigest digest: Digest, at now: Date) async throws -> User?

    /// Ends the session whose secret has `digest`; `false` when there is none.
    func endSession(_ digest: Digest) async throws -> Bool

    /// Records a one-time sign-in link of `uid` live until `expiresAt`; forgets the user's
    /// links that expired before `createdAt`. Returns `false` when there is no such user.
    func addSignInLink(_ digest: Digest, for uid: String, createdAt: Date, expiresAt: Date) async throws -> Bool

    /// Uses up the sign-in link whose secret has `digest`: it is removed, and its uid is
    /// returned when it was live at `now` and made after the user's tokens were last revoked.
    /// `nil` for a link used before, expired, revoked or unknown.
    /// Of two uses at once, one gets the uid.
    func useSignInLink(_ digest: Digest, at now: Date) async throws -> String?

    /// Records `share`, whose secret has `digest`; forgets the spot's share links that expired
    /// before `share.createdAt`. Returns `false` when its maker is not a user.
    func addSpotShare(_ share: SpotShare, digest: Digest) async throws -> Bool

    /// The share link whose secret has `digest` (compared in constant time), when it is live
    /// at `now` and was made after its maker's tokens were last revoked; else `nil`.
    func spotShare(digest: Digest, at now: Date) async throws -> SpotShare?

    /// The share links of a spot live at `now`, oldest first.
    func spotShares(bucket: String, spotId: String, at now: Date) async throws -> [SpotShare]

    /// Revokes share link `id` of a spot; `false` when there is no such link.
    func revokeSpotShare(_ id: String, bucket: String, spotId: String) async throws -> Bool
}

/// The most sessions a user keeps: signing in once more ends the oldest.
public let maxSessionsPerUser = 50

/// A link that shows one spot's page to anyone who holds it, until it expires or is revoked.
public struct SpotShare: Sendable, Equatable {
    /// Names the link for `revoke`: the first 16 hex digits of its secret's digest.
    public var id: String
    public var bucket: String
    public var spotId: String
    /// The user who made it; the spot is shown as this user may see it.
    public var createdBy: String
    public var createdAt: Date
    public var expiresAt: Date

    public init(id: String, bucket: String, spotId: String, createdBy: String, createdAt: Date, expiresAt: Date) {
        self.id = id
        self.bucket = bucket
        self.spotId = spotId
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// The id of the share whose secret has `digest`.
    public static func id(of digest: Digest) -> String { String(digest.hex.prefix(16)) }
}

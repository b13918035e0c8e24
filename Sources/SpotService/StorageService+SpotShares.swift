import Foundation
import SpotCore

/// Spot pages and the links that share them: a page shows a spot as the rules let anyone
/// see it, or, through a share link, as the link's maker may see it; either way without
/// positions where the spot hides them.
extension StorageService {
    /// How long a share link lives when its maker does not say (seconds).
    public static let defaultShareLifetime: TimeInterval = 7 * 24 * 3600
    /// The longest a share link may live (seconds).
    public static let maxShareLifetime: TimeInterval = 365 * 24 * 3600
    /// The most live share links a spot may have.
    public static let maxSharesPerSpot = 100

    /// A new link sharing spot `id` of `bucket` for `lifetime` seconds, and its secret (shown only now).
    /// - Throws: `.badRequest` for a lifetime out of range; as `spot(bucket:id:for:)`;
    ///   `.forbidden` for anyone but the spot's owner or an admin; `.conflict` when the spot
    ///   has `maxSharesPerSpot` live links.
    public func shareSpot(bucket: String, id: String, lifetime: TimeInterval, by user: User?) async throws -> (secret: String, share: SpotShare) {
        guard lifetime >= 60, lifetime <= Self.maxShareLifetime else {
            throw SpotError(.badRequest, "a share link lives from 60 seconds to \(Int(Self.maxShareLifetime / 86400)) days")
        }
        let spot = try await ownedSpot(bucket: bucket, id: id, by: user, toDo: "share")
        let now = configuration.now()
        guard try await catalog.spotShares(bucket: bucket, spotId: spot.id, at: now).count < Self.maxSharesPerSpot else {
            throw SpotError(.conflict, "spot '\(spot.id)' has \(Self.maxSharesPerSpot) live share links, the most it may have; revoke some first")
        }
        let secret = Tokens.generate(prefix: "ssh_")
        let digest = Tokens.digest(of: secret)
        let share = SpotShare(
            id: SpotShare.id(of: digest), bucket: bucket, spotId: spot.id, createdBy: spot.maker, createdAt: now, expiresAt: now + lifetime)
        guard try await catalog.addSpotShare(share, digest: digest) else { throw Self.noSuchUser(spot.maker) }
        return (secret, share)
    }

    /// The live share links of spot `id`, oldest first, for its owner or an admin.
    public func spotShares(bucket: String, id: String, by user: User?) async throws -> [SpotShare] {
        let spot = try await ownedSpot(bucket: bucket, id: id, by: user, toDo: "see the share links of")
        return try await catalog.spotShares(bucket: bucket, spotId: spot.id, at: configuration.now())
    }

    /// Revokes share link `shareId` of spot `id`, for its owner or an admin.
    /// - Throws: `.notFound` when the spot has no such link.
    public func revokeSpotShare(_ shareId: String, bucket: String, id: String, by user: User?) async throws {
        let spot = try await ownedSpot(bucket: bucket, id: id, by: user, toDo: "revoke the share links of")
        guard try await catalog.revokeSpotShare(shareId, bucket: bucket, spotId: spot.id) else {
            throw SpotError(.notFound, "spot \(bucket)/\(spot.id) has no share link \(shareId)")
        }
    }

    /// Spot `id` of `bucket` as its page shows it: through the live share link `secret` of
    /// this spot as the link's maker may see it, else as anyone may (the rules, anonymously).
    /// - Throws: `.notFound` for a spot nobody may see without a link, and for a link that
    ///   expired, was revoked, or is not one of this spot: a page never tells which.
    public func spotPage(bucket: String, id: String, share secret: String?) async throws -> SpotDetails {
        do {
            let spot = try await self.spot(bucket: bucket, id: id, for: try await shareViewer(bucket: bucket, spotId: id, share: secret))
            return Self.asSeen(spot, by: nil)
        } catch let error as SpotError where [.unauthenticated, .forbidden, .notFound].contains(error.kind) {
            throw SpotError(.notFound, secret == nil
                ? "there is no spot page here: the spot is private or does not exist (a share link from its owner shows it)"
                : "this share link has expired, was revoked, or is not one; ask the spot's owner for a new one")
        }
    }

    /// The bytes of the photo at `path` as a spot page shows it (see `pagePhoto`): GPS-free
    /// when its spot hides positions.
    public func spotPageDownload(at path: ObjectPath, share secret: String?) async throws -> Download {
        let (object, spot, damage) = try await pagePhoto(at: path, share: secret)
        return try await download(of: object, spot: spot, for: nil, damage: damage)
    }

    /// The thumbnail of the photo at `path` as a spot page shows it (thumbnails carry no position).
    public func spotPageThumbnail(of path: ObjectPath, size: Int, webP: Bool, share secret: String?) async throws -> Thumbnail {
        let (object, _, damage) = try await pagePhoto(at: path, share: secret)
        return try Self.thumbnail(of: object, size: size, webP: webP, damage: damage)
    }

    /// The object at `path` when a spot page may show it: a photo (an object with thumbnails,
    /// what the page lists) of the page's spot that the viewer (`shareViewer`) may get.
    /// - Throws: `.notFound` for anything else, saying no more than the page would.
    private func pagePhoto(at path: ObjectPath, share secret: String?) async throws -> (StoredObject, SpotState?, [SpotCore.Digest: String]) {
        let notShown = SpotError(.notFound, "there is no such photo on this spot's page")
        do {
            let viewer = try await shareViewer(bucket: path.bucket, spotId: path.topFolder, share: secret)
            let (object, spot, damage) = try await readableObject(at: path, for: viewer)
            guard !object.thumbnails.isEmpty else { throw notShown }
            return (object, spot, damage)
        } catch let error as SpotError where [.unauthenticated, .forbidden, .notFound].contains(error.kind) {
            throw notShown
        }
    }

    /// The maker of the live share link `secret` when it shares spot `spotId` of `bucket`;
    /// `nil` (anyone) without a secret.
    /// - Throws: `.notFound` for a secret that is not a live link of that spot.
    private func shareViewer(bucket: String, spotId: String?, share secret: String?) async throws -> User? {
        guard let secret else { return nil }
        guard let share = try await catalog.spotShare(digest: Tokens.digest(of: secret), at: configuration.now()),
              share.bucket == bucket, share.spotId == spotId,
              let maker = try await catalog.user(uid: share.createdBy)
        else { throw SpotError(.notFound, "this share link has expired, was revoked, or is not one; ask the spot's owner for a new one") }
        return maker
    }

    /// Spot `id` once `user` owns it or holds the admin role, with the uid a link is made by.
    private func ownedSpot(bucket: String, id: String, by user: User?, toDo action: String) async throws -> (id: String, maker: String) {
        let spot = try await self.spot(bucket: bucket, id: id, for: user)
        guard let user else { throw SpotError(.unauthenticated, "sign in to \(action) spot '\(spot.id)'") }
        guard spot.owner == user.uid || user.isAdmin else {
            throw SpotError(.forbidden, "spot '\(spot.id)' belongs to \(spot.owner); only its owner or an admin may \(action) it")
        }
        return (spot.id, user.uid)
    }
}

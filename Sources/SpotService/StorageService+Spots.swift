import Access
import Foundation
import SpotCore

extension StorageService {
    /// The spot `id` in `bucket`, if `user` may list it; only the city when it hides its position from `user`.
    public func spot(bucket: String, id asked: String, for user: User?) async throws -> SpotDetails {
        guard !asked.contains("/"), let id = (try? ObjectPath(bucket: bucket, name: asked))?.name else {
            throw SpotError(.badRequest, "'\(asked)' is not a spot id: a spot is one folder name directly under the bucket")
        }
        try authorizeListing(bucket: bucket, prefix: "\(id)/", for: user)
        guard let spot = try await catalog.spotDetails(bucket: bucket, id: id) else {
            throw SpotError(.notFound, "there is no spot \(bucket)/\(id)")
        }
        return Self.asSeen(spot, by: user)
    }

    /// Applies the owner's name, description, city override or hiding of the position to a spot.
    /// - Throws: `.forbidden` for anyone but the spot's owner; `.notFound` for a missing spot.
    public func updateSpot(bucket: String, id: String, changes: SpotChanges, by user: User?) async throws -> SpotDetails {
        let spot = try await self.spot(bucket: bucket, id: id, for: user)
        guard let user else { throw SpotError(.unauthenticated, "sign in to change spot '\(id)'") }
        guard spot.owner == user.uid else {
            throw SpotError(.forbidden, "spot '\(id)' belongs to \(spot.owner); only its owner may change it")
        }
        return try await catalog.updateSpot(bucket: bucket, id: spot.id, changes: changes)
    }

    /// Spots by city or near a point, if `user` may list the bucket. Spots hiding their
    /// position never match `near` and show others only their city.
    public func findSpots(_ query: SpotQuery, for user: User?) async throws -> SpotPage {
        try authorizeListing(bucket: query.bucket, prefix: "", for: user)
        var page = try await catalog.findSpots(query)
        page.spots = page.spots.map { Self.asSeen($0, by: user) }
        return page
    }
}

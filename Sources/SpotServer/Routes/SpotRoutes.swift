import Foundation
import Hummingbird
import SpotAPI
import SpotCore
import SpotService

/// The handlers of `/v0/b/{bucket}/spots…`.
struct SpotRoutes: ServiceRoutes {
    let service: StorageService
    let limiter: FailedAuthenticationLimiter
    let addressing: ClientAddressing

    /// `GET /v0/b/{bucket}/spots?city=NAME` or `?near=LAT,LON&radiusKm=R`, with `pageToken` and `maxResults`.
    @Sendable func find(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        let parameters = request.uri.queryParameters
        let criterion: SpotQuery.Criterion
        switch (parameters.get("city"), parameters.get("near")) {
        case let (city?, nil):
            criterion = .city(city)
        case let (nil, near?):
            let parts = near.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let latitude = parts[0], let longitude = parts[1] else {
                throw SpotError(.badRequest, "near must be LAT,LON in decimal degrees, like near=48.8584,2.2945")
            }
            let radius = try parameters.get("radiusKm").map { text throws(SpotError) in
                guard let value = Double(text) else { throw SpotError(.badRequest, "radiusKm must be a number of kilometres") }
                return value
            } ?? 10
            criterion = .near(latitude: latitude, longitude: longitude, radiusKm: radius)
        default:
            throw SpotError(.badRequest, "search spots with exactly one of ?city=NAME or ?near=LAT,LON&radiusKm=R")
        }
        var query = SpotQuery(bucket: try bucket(context), criterion: criterion, pageToken: parameters.get("pageToken"))
        if let text = parameters.get("maxResults") {
            guard let value = Int(text) else { throw SpotError(.badRequest, "maxResults must be a number from 1 to \(ListQuery.maxPageSize)") }
            query.maxResults = value
        }
        let page = try await service.findSpots(query, for: user)
        let base = baseURL(request, context)
        return try json(SpotPageResource(spots: page.spots.map { SpotResource($0, baseURL: base) }, nextPageToken: page.nextPageToken))
    }

    /// `GET /v0/b/{bucket}/spots/{spotId}`.
    @Sendable func get(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        let spot = try await service.spot(bucket: try bucket(context), id: try spotID(context), for: user)
        return try json(SpotResource(spot, baseURL: baseURL(request, context)))
    }

    /// `PATCH /v0/b/{bucket}/spots/{spotId}` with `{"name", "description", "city", "hideLocation"}`
    /// (each optional; `""` clears a text).
    @Sendable func update(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        let changes = try await decodeBody(
            SpotChangesBody.self, of: request, upTo: 64 * 1024,
            example: #"{"name": "…", "description": "…", "city": "…", "hideLocation": true}"#)
        let spot = try await service.updateSpot(
            bucket: try bucket(context), id: try spotID(context),
            changes: SpotChanges(name: changes.name, description: changes.description, city: changes.city, hidesLocation: changes.hideLocation),
            by: user)
        return try json(SpotResource(spot, baseURL: baseURL(request, context)))
    }

    /// `POST /v0/b/{bucket}/spots/{spotId}/shares` with `{"expiresIn": seconds}` (optional,
    /// 7 days by default): a new share link of the spot, for its owner or an admin; its
    /// `url` (the spot's page with the link's secret) is shown only now.
    @Sendable func share(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        let body = try await decodeBody(NewSpotShareBody.self, of: request, upTo: 4096, example: #"{"expiresIn": 604800}"#)
        let bucket = try bucket(context)
        let (secret, share) = try await service.shareSpot(
            bucket: bucket, id: try spotID(context), lifetime: body.expiresIn ?? StorageService.defaultShareLifetime, by: user)
        let url = SpotShareResource.pageURL(bucket: bucket, spotId: share.spotId, secret: secret, baseURL: baseURL(request, context))
        return try json(SpotShareResource(share, url: url))
    }

    /// `GET /v0/b/{bucket}/spots/{spotId}/shares`: the spot's live share links (without
    /// their secrets), for its owner or an admin.
    @Sendable func shares(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        let shares = try await service.spotShares(bucket: try bucket(context), id: try spotID(context), by: user)
        return try json(SpotSharesResource(shares: shares.map { SpotShareResource($0) }))
    }

    /// `DELETE /v0/b/{bucket}/spots/{spotId}/shares/{id}`: revokes a share link; 204.
    @Sendable func revokeShare(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        try await service.revokeSpotShare(
            try decodedParameter("share", as: "share link id", context), bucket: try bucket(context), id: try spotID(context), by: user)
        return Response(status: .noContent)
    }

    private func spotID(_ context: SpotRequestContext) throws -> String {
        try decodedParameter("spot", as: "spot id", context)
    }
}

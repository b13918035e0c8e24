import Foundation
import SpotCore

/// A spot search checked and turned into what to fetch and how to page it, independent of
/// the backend.
///
/// A page token is base64url of the search it belongs to and the last spot a page
/// emitted; the next page resumes strictly after that spot in the search's order (id for
/// `city`; distance, then id for `near`). So concatenated pages hold every spot that
/// matched throughout exactly once, in order, whatever changes between pages.
package struct SpotSearchPlan: Sendable {
    /// What to fetch.
    package enum Criterion: Sendable, Equatable {
        /// Spots whose city key is `key`, in id order (bytes of UTF-8), after `afterId`.
        case city(key: String, afterId: String?)
        /// Spots within `radiusKm` of `center`, narrowed by `box`, after `after` in
        /// (distance, id) order.
        case near(center: GeoPoint, radiusKm: Double, box: BoundingBox, after: NearHit?)
    }

    /// A spot found by a `near` search, with its exact distance from the centre.
    package struct NearHit: Sendable, Equatable {
        package var id: String
        package var distanceKm: Double

        /// Whether `self` comes before `other` in the order of `near` results.
        package func precedes(_ other: NearHit) -> Bool {
            distanceKm != other.distanceKm
                ? distanceKm < other.distanceKm
                : id.utf8.lexicographicallyPrecedes(other.id.utf8)
        }
    }

    /// The largest radius a `near` search may have, in km (about half the Earth's circumference).
    package static let maxRadiusKm = 20_000.0

    package let bucket: String
    /// Spots per page, 1…`ListQuery.maxPageSize`.
    package let pageSize: Int
    package let criterion: Criterion
    /// What a token must start with to belong to this search.
    private let signature: String

    /// Checks `query`.
    /// - Throws: `SpotError(.badRequest)` for an invalid bucket; `maxResults` outside
    ///   1…`ListQuery.maxPageSize`; a city that is empty once folded; a latitude outside
    ///   -90…90 or a longitude outside -180…180 (or not finite); a radius not in
    ///   (0, `maxRadiusKm`]; a page token that is malformed or from another search. An
    ///   empty page token counts as none. Unlike photo positions, (0, 0) is a valid centre.
    package init(_ query: SpotQuery) throws(SpotError) {
        try ObjectPath.validate(bucket: query.bucket)
        guard (1...ListQuery.maxPageSize).contains(query.maxResults) else {
            throw SpotError(.badRequest, "maxResults must be between 1 and \(ListQuery.maxPageSize), not \(query.maxResults)")
        }
        bucket = query.bucket
        pageSize = query.maxResults
        let token = query.pageToken.flatMap { $0.isEmpty ? nil : $0 }
        switch query.criterion {
        case .city(let city):
            let key = cityKey(city)
            guard !key.isEmpty else { throw SpotError(.badRequest, "the city to search for is empty") }
            let signature = "city/" + key
            self.signature = signature
            criterion = .city(key: key, afterId: try token.map { token throws(SpotError) in
                try Self.lastId(inToken: token, signature: signature)
            })
        case .near(let latitude, let longitude, let radiusKm):
            guard latitude.isFinite, abs(latitude) <= 90, longitude.isFinite, abs(longitude) <= 180 else {
                throw SpotError(.badRequest, "(\(latitude), \(longitude)) is not a position: the latitude must be within -90...90 and the longitude within -180...180")
            }
            guard radiusKm.isFinite, radiusKm > 0, radiusKm <= Self.maxRadiusKm else {
                throw SpotError(.badRequest, "the radius must be more than 0 and at most \(Int(Self.maxRadiusKm)) km, not \(radiusKm)")
            }
            let signature = "near/" + [latitude, longitude, radiusKm].map(Self.hex).joined(separator: "/")
            self.signature = signature
            criterion = .near(
                center: GeoPoint(latitude: latitude, longitude: longitude), radiusKm: radiusKm,
                box: BoundingBox(latitude: latitude, longitude: longitude, radiusKm: radiusKm),
                after: try token.map { token throws(SpotError) in try Self.lastHit(inToken: token, signature: signature) })
        }
    }

    /// One page of a `city` search from the ids of up to `pageSize` + 1 matching spots in
    /// id order after the token's: the ids to show, and the next page's token (`nil` when
    /// nothing follows).
    package func cityPage(_ ids: [String]) -> (ids: [String], nextPageToken: String?) {
        let page = Array(ids.prefix(pageSize))
        guard ids.count > pageSize, let last = page.last else { return (page, nil) }
        return (page, Base64URL.encode(signature + "/" + last))
    }

    /// One page of a `near` search from `candidates` (every spot in the box, any order):
    /// the spots within the radius after the token's, nearest first (then by id), and the
    /// next page's token (`nil` when nothing follows).
    package func nearPage(
        _ candidates: some Sequence<(id: String, latitude: Double, longitude: Double)>
    ) -> (hits: [NearHit], nextPageToken: String?) {
        guard case .near(let center, let radiusKm, _, let after) = criterion else { return ([], nil) }
        var hits = candidates.compactMap { candidate -> NearHit? in
            let hit = NearHit(
                id: candidate.id,
                distanceKm: GreatCircle.distanceKm(
                    latitude: center.latitude, longitude: center.longitude,
                    latitude: candidate.latitude, longitude: candidate.longitude))
            guard hit.distanceKm <= radiusKm, after.map({ $0.precedes(hit) }) ?? true else { return nil }
            return hit
        }
        hits.sort { $0.precedes($1) }
        let page = Array(hits.prefix(pageSize))
        guard hits.count > pageSize, let last = page.last else { return (page, nil) }
        return (page, Base64URL.encode(signature + "/" + Self.hex(last.distanceKm) + "/" + last.id))
    }

    /// The 16 hex digits of `value`'s bits, so a token carries a distance exactly.
    private static func hex(_ value: Double) -> String {
        let digits = String(value.bitPattern, radix: 16)
        return String(repeating: "0", count: 16 - digits.utf8.count) + digits
    }

    /// The '/'-separated fields of a token after this search's signature.
    /// - Throws: `SpotError(.badRequest)` when the token is malformed or from another search.
    private static func fields(ofToken token: String, signature: String) throws(SpotError) -> [String] {
        guard let text = Base64URL.decode(token) else { throw SpotError(.badRequest, "the page token is malformed") }
        let prefix = Array((signature + "/").utf8)
        guard text.utf8.starts(with: prefix) else { throw SpotError(.badRequest, "the page token belongs to another search") }
        return text.utf8.dropFirst(prefix.count)
            .split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// The last spot id of the page `token` follows.
    private static func lastId(inToken token: String, signature: String) throws(SpotError) -> String {
        // Spot ids are path segments: not empty, no '/'.
        let fields = try fields(ofToken: token, signature: signature)
        guard fields.count == 1, let id = fields.first, !id.isEmpty else { throw SpotError(.badRequest, "the page token is malformed") }
        return id
    }

    /// The last spot (id and distance) of the page `token` follows.
    private static func lastHit(inToken token: String, signature: String) throws(SpotError) -> NearHit {
        let malformed = SpotError(.badRequest, "the page token is malformed")
        let fields = try fields(ofToken: token, signature: signature)
        guard fields.count == 2, fields[0].utf8.count == 16, let bits = UInt64(fields[0], radix: 16), !fields[1].isEmpty
        else { throw malformed }
        let distanceKm = Double(bitPattern: bits)
        guard distanceKm.isFinite, distanceKm >= 0 else { throw malformed }
        return NearHit(id: fields[1], distanceKm: distanceKm)
    }
}

import CatalogPlanning
import Foundation
import PostgresNIO
import SpotCore

extension PostgresCatalog {
    /// The spot `id` in `bucket` with its overrides, derived location and objects (name
    /// order), or `nil` when it has no spot row; see `SQLiteCatalog.spotDetails`.
    public func spotDetails(bucket: String, id: String) async throws -> SpotDetails? {
        try await read { connection in
            guard let spot = try await Self.spotRecord(bucket: bucket, id: id, lock: false, connection, logger: self.logger) else {
                return nil
            }
            return try await Self.details(of: [spot], connection, logger: self.logger).first
        }
    }

    /// Applies the owner's `changes` to spot `id` in `bucket` in one transaction and returns
    /// it; the checks and trimming are `SpotEdit`'s.
    /// - Throws: `SpotError(.badRequest)` for fields that are too long (nothing is
    ///   written); `SpotError(.notFound)` when the spot does not exist.
    public func updateSpot(bucket: String, id: String, changes: SpotChanges) async throws -> SpotDetails {
        let edit = try SpotEdit(changes)
        return try await write { connection in
            guard var spot = try await Self.spotRecord(bucket: bucket, id: id, lock: true, connection, logger: self.logger) else {
                throw SpotError(.notFound, "there is no spot \(bucket)/\(id)")
            }
            edit.apply(to: &spot)
            try await Self.update(spot, connection, logger: self.logger)
            guard let details = try await Self.details(of: [spot], connection, logger: self.logger).first else {
                throw SpotError(.internal, "spot \(bucket)/\(id) vanished while it was being updated")
            }
            return details
        }
    }

    /// One page of spots in `query.bucket`, each with its objects, read from one snapshot;
    /// the order, paging and errors are `SpotSearchPlan`'s. Both searches are index range
    /// scans (`cityQuery`, `nearQuery`); a page costs a fixed number of queries.
    public func findSpots(_ query: SpotQuery) async throws -> SpotPage {
        let plan = try SpotSearchPlan(query)
        return try await read { connection in
            let logger = self.logger
            switch plan.criterion {
            case .city(let key, let afterId):
                let spots = try await connection.query(Self.cityQuery(plan: plan, key: key, afterId: afterId), logger: logger)
                    .collect().map(Self.spotRecord)
                let page = plan.cityPage(spots.map(\.id))
                let details = try await Self.details(of: Array(spots.prefix(page.ids.count)), connection, logger: logger)
                return SpotPage(spots: details, nextPageToken: page.nextPageToken)
            case .near(_, _, let box, _):
                let candidates = try await connection.query(Self.nearQuery(bucket: plan.bucket, box: box), logger: logger).collect()
                    .map { row in try row.decode((String, Double, Double).self) }
                    .map { (id: $0.0, latitude: $0.1, longitude: $0.2) }
                let page = plan.nearPage(candidates)
                let ids = page.hits.map(\.id)
                let rows = try await connection.query(
                    "SELECT \(unescaped: Self.spotColumns) FROM spots WHERE bucket = \(plan.bucket) AND id = ANY(\(ids))", logger: logger
                ).collect()
                let byId = Dictionary(uniqueKeysWithValues: try rows.map(Self.spotRecord).map { ($0.id, $0) })
                let distances = Dictionary(uniqueKeysWithValues: page.hits.map { ($0.id, $0.distanceKm) })
                let details = try await Self.details(of: ids.compactMap { byId[$0] }, distances: distances, connection, logger: logger)
                return SpotPage(spots: details, nextPageToken: page.nextPageToken)
            }
        }
    }

    /// Up to `plan.pageSize` + 1 spots whose city key is `key`, after `afterId`, in id
    /// order: a range scan of the (bucket, city_key, id) index.
    package static func cityQuery(plan: SpotSearchPlan, key: String, afterId: String?) -> PostgresQuery {
        var statement = Statement("SELECT \(spotColumns) FROM spots WHERE bucket = ")
        statement.bind(plan.bucket)
        statement.sql += " AND city_key = "
        statement.bind(key)
        if let afterId {
            statement.sql += " AND id > "
            statement.bind(afterId)
        }
        statement.sql += " ORDER BY id LIMIT "
        statement.bind(plan.pageSize + 1)
        return statement.query
    }

    /// The id and position of every spot of `bucket` whose location is in `box` and not
    /// hidden: a range scan of the (bucket, latitude, longitude, id) index.
    package static func nearQuery(bucket: String, box: BoundingBox) -> PostgresQuery {
        var statement = Statement("SELECT id, latitude, longitude FROM spots WHERE bucket = ")
        statement.bind(bucket)
        statement.sql += " AND NOT hides_location AND latitude BETWEEN "
        statement.bindRange(box.latitudes)
        if let longitudes = box.longitudes {
            for (index, range) in longitudes.enumerated() {
                statement.sql += index == 0 ? " AND (longitude BETWEEN " : " OR longitude BETWEEN "
                statement.bindRange(range)
            }
            statement.sql += ")"
        } else {
            statement.sql += " AND longitude IS NOT NULL"
        }
        return statement.query
    }

    /// Brings the derived location of `spot` (when it has a row) up to date with its
    /// objects' photos: the first by creation time, then name, with a valid position; its
    /// place; whether another is more than 1 km away; and the city key.
    static func refreshLocation(of spot: SpotKey, _ connection: PostgresConnection, logger: Logger) async throws {
        guard var record = try await spotRecord(bucket: spot.bucket, id: spot.id, lock: true, connection, logger: logger) else { return }
        let before = record
        record.setLocation(try await derivedLocation(of: spot, connection, logger: logger))
        if record != before { try await update(record, connection, logger: logger) }
    }

    /// The location `spot` takes from its objects' photos (see `refreshLocation`); `nil`
    /// when none has a position.
    static func derivedLocation(of spot: SpotKey, _ connection: PostgresConnection, logger: Logger) async throws -> SpotLocation? {
        let photos = try await connection.query("""
            SELECT \(unescaped: photoColumns) FROM objects JOIN photos USING (digest)
            WHERE objects.bucket = \(spot.bucket) AND objects.spot_id = \(spot.id)
              AND photos.latitude IS NOT NULL AND photos.longitude IS NOT NULL
            ORDER BY objects.created_at, objects.name
            """, logger: logger).collect().map(photoRecord)
        return SpotLocation(photos: photos.lazy.map { ($0.location, $0.place) })
    }

    /// The row of spot `id` in `bucket`, locked until the transaction ends when `lock`, or `nil`.
    static func spotRecord(
        bucket: String, id: String, lock: Bool, _ connection: PostgresConnection, logger: Logger
    ) async throws -> SpotRecord? {
        var query: PostgresQuery = "SELECT \(unescaped: spotColumns) FROM spots WHERE bucket = \(bucket) AND id = \(id)"
        if lock { query.sql += " FOR UPDATE" }  // no bound value follows
        return try await connection.query(query, logger: logger).collect().first.map(spotRecord)
    }

    /// The domain values of `spots` (all in one bucket), in the same order, each with its
    /// objects in name order and its distance from `distances`: three queries in all.
    private static func details(
        of spots: [SpotRecord], distances: [String: Double] = [:], _ connection: PostgresConnection, logger: Logger
    ) async throws -> [SpotDetails] {
        guard let bucket = spots.first?.bucket else { return [] }
        let ids = spots.map(\.id)
        let objects = try await storedObjects(in: bucket, where: "spot_id", isIn: ids, connection, logger: logger)
        let objectsBySpot = Dictionary(grouping: objects) { $0.path.topFolder ?? "" }
        return spots.map { spot in
            spot.details(objects: objectsBySpot[spot.id] ?? [], distanceKm: distances[spot.id])
        }
    }
}

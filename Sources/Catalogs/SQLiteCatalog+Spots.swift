import Foundation
import GRDB
import CatalogPlanning
import SpotCore

extension SQLiteCatalog {
    /// The spot `id` in `bucket` with its overrides, derived location and objects (name
    /// order), or `nil` when it has no spot row. A spot whose objects were all removed is
    /// still there, with no objects and no location.
    ///
    /// `place.city` is the effective city (the override, else the geocoded one); with an
    /// override `place.distanceKm` is `nil`, and a spot without a geocoded place has a
    /// place holding only the override.
    public func spotDetails(bucket: String, id: String) async throws -> SpotDetails? {
        try readNow { db in
            guard let spot = try SpotRecord.fetchOne(db, key: SpotRecord.key(bucket: bucket, id: id)) else { return nil }
            return try Self.details(of: [spot], db).first
        }
    }

    /// Applies the owner's `changes` to spot `id` in `bucket` in one transaction and returns it.
    ///
    /// Fields are trimmed of white space; `nil` leaves a field, an empty string clears it
    /// (clearing the city goes back to the geocoded one). The city key follows the
    /// effective city. Who may change a spot is the policy's business, not the catalog's.
    /// - Throws: `SpotError(.badRequest)` for a name or city over 200 characters or a
    ///   description over 2000 (nothing is written); `SpotError(.notFound)` when the spot
    ///   does not exist.
    public func updateSpot(bucket: String, id: String, changes: SpotChanges) async throws -> SpotDetails {
        let edit = try SpotEdit(changes)
        return try await write { db in
            guard var spot = try SpotRecord.fetchOne(db, key: SpotRecord.key(bucket: bucket, id: id)) else {
                throw SpotError(.notFound, "there is no spot \(bucket)/\(id)")
            }
            edit.apply(to: &spot)
            try spot.update(db)
            guard let details = try Self.details(of: [spot], db).first else {
                throw SpotError(.internal, "spot \(bucket)/\(id) vanished while it was being updated")
            }
            return details
        }
    }

    /// One page of spots in `query.bucket`, each with its objects, read from one snapshot.
    ///
    /// `.city(name)`: spots whose effective city folds (`cityKey(_:)`) to the same key as
    /// `name`, by id (byte order). `.near`: spots with a location within `radiusKm`
    /// (haversine on a sphere of radius 6371.0088 km), nearest first, then by id, with
    /// `distanceKm` set, never a spot whose owner hid its position; a latitude/longitude box narrows the scan, widened to every
    /// longitude when the circle holds a pole. A page costs a fixed number of queries,
    /// whatever it holds.
    /// - Throws: `SpotError(.badRequest)` for an invalid bucket, `maxResults` outside
    ///   1…`ListQuery.maxPageSize`, an empty city, an invalid centre or radius (see
    ///   `SpotSearchPlan`), or a page token that is malformed or from another search.
    public func findSpots(_ query: SpotQuery) async throws -> SpotPage {
        let plan = try SpotSearchPlan(query)
        return try readNow { db in
            switch plan.criterion {
            case .city(let key, let afterId):
                var request = SpotRecord.filter(SpotRecord.Columns.bucket == plan.bucket && SpotRecord.Columns.cityKey == key)
                if let afterId { request = request.filter(SpotRecord.Columns.id > afterId) }
                let spots = try request.order(SpotRecord.Columns.id).limit(plan.pageSize + 1).fetchAll(db)
                let page = plan.cityPage(spots.map(\.id))
                return SpotPage(spots: try Self.details(of: Array(spots.prefix(page.ids.count)), db), nextPageToken: page.nextPageToken)
            case .near(_, _, let box, _):
                let candidates = try Self.spotPositions(in: plan.bucket, within: box, db)
                let page = plan.nearPage(candidates)
                let spots = try Self.spots(in: plan.bucket, ids: page.hits.map(\.id), db)
                let distances = Dictionary(uniqueKeysWithValues: page.hits.map { ($0.id, $0.distanceKm) })
                return SpotPage(spots: try Self.details(of: spots, distances: distances, db), nextPageToken: page.nextPageToken)
            }
        }
    }

    /// Brings the derived location of spot `spot` (when it has a row) up to date with its
    /// objects' photos: the first by creation time, then name, with a valid position; its
    /// place; whether another is more than 1 km away; and the city key.
    static func refreshLocation(of spot: SpotKey, _ db: Database) throws {
        guard var record = try SpotRecord.fetchOne(db, key: SpotRecord.key(bucket: spot.bucket, id: spot.id)) else { return }
        let before = record
        record.setLocation(try derivedLocation(of: spot, db))
        if record != before { try record.update(db) }
    }

    /// The location spot `spot` takes from its objects' photos (see `refreshLocation`);
    /// `nil` when none has a position.
    static func derivedLocation(of spot: SpotKey, _ db: Database) throws -> SpotLocation? {
        let photos = try PhotoRecord.fetchAll(db, sql: """
            SELECT photos.* FROM objects JOIN photos ON photos.digest = objects.digest
            WHERE objects.bucket = ? AND objects.spotId = ? AND photos.latitude IS NOT NULL AND photos.longitude IS NOT NULL
            ORDER BY objects.createdAt, objects.name
            """, arguments: [spot.bucket, spot.id])
        return SpotLocation(photos: photos.lazy.map { ($0.location, $0.place) })
    }

    /// The spots holding an object with blob `digest`, whatever their bucket.
    static func spotsHolding(digest: Digest, _ db: Database) throws -> [SpotKey] {
        try Row.fetchAll(db, sql: """
            SELECT DISTINCT bucket, spotId FROM objects WHERE digest = ? AND spotId IS NOT NULL
            """, arguments: [digest.hex])
            .map { SpotKey(bucket: $0["bucket"], id: $0["spotId"]) }
    }

    /// The spot rows of `ids` in `bucket`, in the order of `ids` (missing ones left out).
    private static func spots(in bucket: String, ids: [String], _ db: Database) throws -> [SpotRecord] {
        guard !ids.isEmpty else { return [] }
        let records = try SpotRecord
            .filter(SpotRecord.Columns.bucket == bucket && (try SpotRecord.Columns.id.isIn(ids)))
            .fetchAll(db)
        let byId = Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0) })
        return ids.compactMap { byId[$0] }
    }

    /// The id and position of every spot of `bucket` whose location is in `box` and not hidden.
    private static func spotPositions(
        in bucket: String, within box: BoundingBox, _ db: Database
    ) throws -> [(id: String, latitude: Double, longitude: Double)] {
        var sql = "SELECT id, latitude, longitude FROM \(SpotRecord.databaseTableName) WHERE bucket = ? AND NOT hidesLocation AND latitude BETWEEN ? AND ?"
        var arguments: StatementArguments = [bucket, box.latitudes.lowerBound, box.latitudes.upperBound]
        if let longitudes = box.longitudes {
            sql += " AND (" + longitudes.map { _ in "longitude BETWEEN ? AND ?" }.joined(separator: " OR ") + ")"
            for range in longitudes { arguments += [range.lowerBound, range.upperBound] }
        } else {
            sql += " AND longitude IS NOT NULL"
        }
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map { ($0["id"], $0["latitude"], $0["longitude"]) }
    }

    /// The domain values of `spots` (all in one bucket), in the same order, each with its
    /// objects in name order and its distance from `distances`: three queries in all.
    private static func details(
        of spots: [SpotRecord], distances: [String: Double] = [:], _ db: Database
    ) throws -> [SpotDetails] {
        guard let bucket = spots.first?.bucket else { return [] }
        let records = try ObjectRecord
            .filter(ObjectRecord.Columns.bucket == bucket && (try ObjectRecord.Columns.spotId.isIn(spots.map(\.id))))
            .order(ObjectRecord.Columns.name)
            .fetchAll(db)
        var objectsBySpot: [String: [StoredObject]] = [:]
        for (record, object) in zip(records, try storedObjects(records, db)) {
            objectsBySpot[record.spotId ?? "", default: []].append(object)
        }
        return spots.map { spot in
            spot.details(objects: objectsBySpot[spot.id] ?? [], distanceKm: distances[spot.id])
        }
    }
}

extension Column {
    /// `self IN (values)` with the values bound as one JSON array, so that no list is too
    /// long for SQLite's limit on bound values.
    func isIn(_ values: some Sequence<String>) throws -> SQLExpression {
        let json = String(decoding: try JSONEncoder().encode(Array(values)), as: UTF8.self)
        return SQL("\(self) IN (SELECT value FROM json_each(\(json)))").sqlExpression
    }
}

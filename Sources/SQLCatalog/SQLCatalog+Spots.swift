import Foundation
import SpotCore

extension SQLCatalog {
    public func spotDetails(bucket: String, id: String) async throws -> SpotDetails? {
        try await read { transaction in
            guard let spot = try await Self.spotRecord(bucket: bucket, id: id, lock: false, transaction) else { return nil }
            return try await Self.details(of: [spot], transaction).first
        }
    }

    /// The checks and trimming are `SpotEdit`'s: a field that is too long is `.badRequest`.
    public func updateSpot(bucket: String, id: String, changes: SpotChanges) async throws -> SpotDetails {
        let edit = try SpotEdit(changes)
        return try await write { transaction in
            guard var spot = try await Self.spotRecord(bucket: bucket, id: id, lock: true, transaction) else {
                throw SpotError(.notFound, "there is no spot \(bucket)/\(id)")
            }
            edit.apply(to: &spot)
            try await transaction.run(spot.update)
            guard let details = try await Self.details(of: [spot], transaction).first else {
                throw SpotError(.internal, "spot \(bucket)/\(id) vanished while it was being updated")
            }
            return details
        }
    }

    /// From one snapshot; the order, paging and errors are `SpotSearchPlan`'s. Both
    /// searches are index range scans (`cityQuery`, `nearQuery`); a page costs a fixed
    /// number of queries.
    public func findSpots(_ query: SpotQuery) async throws -> SpotPage {
        let plan = try SpotSearchPlan(query)
        return try await read { transaction in
            switch plan.criterion {
            case .city(let key, let afterId):
                let spots = try await transaction.rows(Self.cityQuery(plan: plan, key: key, afterId: afterId)).map(SpotRecord.init)
                let page = plan.cityPage(spots.map(\.id))
                let details = try await Self.details(of: Array(spots.prefix(page.ids.count)), transaction)
                return SpotPage(spots: details, nextPageToken: page.nextPageToken)
            case .near(_, _, let box, _):
                let candidates = try await transaction.rows(Self.nearQuery(bucket: plan.bucket, box: box))
                    .map { row in (id: try row(0) as String, latitude: try row(1) as Double, longitude: try row(2) as Double) }
                let page = plan.nearPage(candidates)
                let ids = page.hits.map(\.id)
                let rows = try await transaction.rows("SELECT \(unescaped: spotColumns) FROM spots WHERE bucket = \(plan.bucket) AND id \(oneOf: ids)")
                let byId = Dictionary(uniqueKeysWithValues: try rows.map(SpotRecord.init).map { ($0.id, $0) })
                let distances = Dictionary(uniqueKeysWithValues: page.hits.map { ($0.id, $0.distanceKm) })
                let details = try await Self.details(of: ids.compactMap { byId[$0] }, distances: distances, transaction)
                return SpotPage(spots: details, nextPageToken: page.nextPageToken)
            }
        }
    }

    /// Up to `plan.pageSize` + 1 spots whose city key is `key`, after `afterId`, in id
    /// order: a range scan of the (bucket, city_key, id) index.
    package static func cityQuery(plan: SpotSearchPlan, key: String, afterId: String?) -> CatalogSQL {
        var query: CatalogSQL = "SELECT \(unescaped: spotColumns) FROM spots WHERE bucket = \(plan.bucket) AND city_key = \(key)"
        if let afterId { query = query + " AND id > \(afterId)" }
        return query + " ORDER BY id LIMIT \(plan.pageSize + 1)"
    }

    /// The id and position of every spot of `bucket` whose location is in `box` and not
    /// hidden: in each latitude band of the box, a range scan of the box's longitudes in the
    /// (bucket, latitude_band, longitude, latitude, id) index. So the spots visited are
    /// those in the box's bands and longitudes, however many share its latitudes elsewhere.
    package static func nearQuery(bucket: String, box: BoundingBox) -> CatalogSQL {
        let bands = box.latitudeBands
        var query: CatalogSQL = "SELECT id, latitude, longitude FROM spots WHERE bucket = \(bucket) AND NOT hides_location AND "
        if bands.count <= BoundingBox.mostBandsReadOneByOne {
            query = query + "latitude_band IN (\(CatalogSQL.joined(bands.map { "\($0)" }, separator: ", ")))"
        } else {
            query = query + "latitude_band BETWEEN \(bands.lowerBound) AND \(bands.upperBound)"
        }
        query = query + " AND latitude BETWEEN \(box.latitudes.lowerBound) AND \(box.latitudes.upperBound)"
        if let longitudes = box.longitudes {
            for (index, range) in longitudes.enumerated() {
                query = query + (index == 0 ? " AND (" : " OR ") + "longitude BETWEEN \(range.lowerBound) AND \(range.upperBound)"
            }
            query = query + ")"
        } else {
            query = query + " AND longitude IS NOT NULL"
        }
        return query
    }

    /// From one snapshot; the order, folding, paging and errors are `ListingPlan`'s (names
    /// compare in byte order of UTF-8). A large folder costs an index seek.
    public func list(_ query: ListQuery) async throws -> Listing {
        let plan = try ListingPlan(query)
        return try await read { transaction in
            var walk = ListingWalk(plan)
            while let next = walk.nextFetch {
                walk.receive(try await transaction.rows(Self.namesQuery(of: plan, from: next.from, limit: next.limit)).map { try $0(0) })
            }
            let page = walk.page
            let items = try await Self.storedObjects(in: plan.bucket, named: page.itemNames, transaction)
            return Listing(prefixes: page.prefixes, items: items, nextPageToken: page.nextPageToken)
        }
    }

    /// Up to `limit` names of `plan` from `start`, in byte order: a range scan of the
    /// (bucket, name) index.
    package static func namesQuery(of plan: ListingPlan, from start: ListingPlan.Start, limit: Int) -> CatalogSQL {
        var query: CatalogSQL = switch start {
        case .atOrAfter(let first): "SELECT name FROM objects WHERE bucket = \(plan.bucket) AND name >= \(first)"
        case .after(let previous): "SELECT name FROM objects WHERE bucket = \(plan.bucket) AND name > \(previous)"
        }
        if let end = plan.end { query = query + " AND name < \(end)" }
        return query + " ORDER BY name LIMIT \(limit)"
    }

    /// Brings the derived location of `spot` (when it has a row) up to date with its objects.
    static func refreshLocation(of spot: SpotKey, _ transaction: any CatalogTransaction) async throws {
        guard var record = try await spotRecord(bucket: spot.bucket, id: spot.id, lock: true, transaction) else { return }
        let before = record
        record.setLocation(try await derivedLocation(of: spot, kept: before, change: .other, transaction))
        if record != before { try await transaction.run(record.update) }
    }

    /// The location `spot` takes from its objects (`SpotLocation`: the first by creation
    /// time, then name, with a valid position; its place; whether another is more than
    /// 1 km away), `nil` when none has a position, after `change` to the location `kept`.
    ///
    /// The first is read through the `objects_on_spot_position_order` index. While it stays
    /// the first, a position added makes the spot scattered when it is far from the first,
    /// and one removed from a spot that was not scattered leaves it so. Otherwise
    /// `isScattered` reads the extremes of the positions. So the cost does not grow with the spot.
    static func derivedLocation(
        of spot: SpotKey, kept: SpotRecord?, change: PositionChange, _ transaction: any CatalogTransaction
    ) async throws -> SpotLocation? {
        guard let row = try await transaction.row("""
            SELECT \(unescaped: photoGeotagColumns) FROM objects JOIN photos ON photos.digest = objects.digest
            WHERE objects.bucket = \(spot.bucket) AND objects.spot_id = \(spot.id) AND objects.latitude IS NOT NULL
            ORDER BY objects.created_at, objects.name LIMIT 1
            """)
        else { return nil }
        let (location, place) = try geotag(row, from: 0)
        guard let first = location else { throw SpotError(.internal, "the catalog lost the position of spot \(spot.bucket)/\(spot.id)'s first photo") }
        if let kept, kept.location == first {
            switch change {
            case .added(let position):
                return SpotLocation(location: first, place: place, scattered: kept.scattered || SpotLocation.scatters(position, from: first))
            case .removed where !kept.scattered:
                return SpotLocation(location: first, place: place, scattered: false)
            default: break
            }
        }
        return SpotLocation(location: first, place: place, scattered: try await isScattered(spot, around: first, transaction))
    }

    /// Whether a position in `spot` lies more than `SpotLocation.scatterThresholdKm` from
    /// `first`, from the extremes of its positions (least and greatest latitude, then
    /// longitude; one statement of four index probes). Every position outside the box
    /// holding all positions within that distance (`BoundingBox`) is farther; every one
    /// inside the box whose positions are all within it (`BoundingBox(inscribedIn:)`) is
    /// not; only those between the boxes are measured, one side at a time. Near a pole or
    /// the antimeridian every position is.
    private static func isScattered(_ spot: SpotKey, around first: GeoPoint, _ transaction: any CatalogTransaction) async throws -> Bool {
        let threshold = SpotLocation.scatterThresholdKm
        let inSpot: CatalogSQL = "FROM objects WHERE bucket = \(spot.bucket) AND spot_id = \(spot.id) AND latitude IS NOT NULL"
        let positions: CatalogSQL = "SELECT latitude, longitude " + inSpot
        func strays(_ query: CatalogSQL) async throws -> Bool {
            try await transaction.rows(query).contains { row in
                SpotLocation.scatters(GeoPoint(latitude: try row(0), longitude: try row(1)), from: first)
            }
        }
        let outer = BoundingBox(latitude: first.latitude, longitude: first.longitude, radiusKm: threshold)
        guard let outerLongitudes = outer.longitudes, outerLongitudes.count == 1,
              let inner = BoundingBox(inscribedIn: threshold, latitude: first.latitude, longitude: first.longitude),
              let innerLongitudes = inner.longitudes?.first
        else { return try await strays(positions) }
        guard let row = try await transaction.row("""
            SELECT (SELECT MIN(latitude) \(inSpot)), (SELECT MAX(latitude) \(inSpot)), (SELECT MIN(longitude) \(inSpot)),
                (SELECT MAX(longitude) \(inSpot))
            """)
        else { return false }
        let extremes: [Double] = try (0..<4).map { try row($0) }
        let (least, greatest) = ([extremes[0], extremes[2]], [extremes[1], extremes[3]])
        let outerRanges = [outer.latitudes, outerLongitudes[0]]
        let innerRanges = [inner.latitudes, innerLongitudes]
        if (0..<2).contains(where: { !outerRanges[$0].contains(least[$0]) || !outerRanges[$0].contains(greatest[$0]) }) { return true }
        for (axis, column) in ["latitude", "longitude"].enumerated() {
            if least[axis] < innerRanges[axis].lowerBound,
               try await strays(positions + " AND \(unescaped: column) < \(innerRanges[axis].lowerBound)") { return true }
            if greatest[axis] > innerRanges[axis].upperBound,
               try await strays(positions + " AND \(unescaped: column) > \(innerRanges[axis].upperBound)") { return true }
        }
        return false
    }

    /// The location `spot` takes from every one of its objects' photos, read in full: what
    /// `fsck` checks the kept location against.
    static func locationFromAllPhotos(of spot: SpotKey, _ transaction: any CatalogTransaction) async throws -> SpotLocation? {
        let photos = try await transaction.rows("""
            SELECT \(unescaped: photoGeotagColumns) FROM objects JOIN photos ON photos.digest = objects.digest
            WHERE objects.bucket = \(spot.bucket) AND objects.spot_id = \(spot.id)
              AND photos.latitude IS NOT NULL AND photos.longitude IS NOT NULL
            ORDER BY objects.created_at, objects.name
            """).map { row in try geotag(row, from: 0) }
        return SpotLocation(photos: photos)
    }

    /// The row of spot `id` in `bucket`, locked until the transaction ends when `lock`, or `nil`.
    static func spotRecord(bucket: String, id: String, lock: Bool, _ transaction: any CatalogTransaction) async throws -> SpotRecord? {
        let query: CatalogSQL = "SELECT \(unescaped: spotColumns) FROM spots WHERE bucket = \(bucket) AND id = \(id)"
        return try await transaction.row(lock ? query + .forUpdate : query).map(SpotRecord.init)
    }

    /// The domain values of `spots` (all in one bucket), in the same order, each with its
    /// first `SpotDetails.shownObjects` objects in name order (a range of the name index
    /// each, 250 spots to a statement) and its distance from `distances`.
    private static func details(
        of spots: [SpotRecord], distances: [String: Double] = [:], _ transaction: any CatalogTransaction
    ) async throws -> [SpotDetails] {
        guard let bucket = spots.first?.bucket else { return [] }
        var objects: [StoredObject] = []
        for start in stride(from: 0, to: spots.count, by: 250) {
            let firstObjects = spots[start..<min(start + 250, spots.count)].enumerated().map { index, spot -> CatalogSQL in
                let folder = spot.id + "/"
                return """
                    SELECT * FROM (SELECT \(unescaped: objectColumns) FROM objects
                        WHERE bucket = \(bucket) AND name >= \(folder) AND name < \(ListingPlan.pastFolder(folder))
                        ORDER BY name LIMIT \(SpotDetails.shownObjects)) AS spot\(unescaped: String(index))
                    """
            }
            objects += try await storedObjects(CatalogSQL.joined(firstObjects, separator: " UNION ALL ") + " ORDER BY name", transaction)
        }
        let objectsBySpot = Dictionary(grouping: objects) { $0.path.topFolder ?? "" }
        return spots.map { spot in spot.details(objects: objectsBySpot[spot.id] ?? [], distanceKm: distances[spot.id]) }
    }
}

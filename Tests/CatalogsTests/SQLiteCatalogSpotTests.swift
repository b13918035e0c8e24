@testable import Catalogs
import SQLCatalog
import Foundation
import GRDB
import GRDBSQLite
import SpotCore
import Testing

/// What only the SQLite catalog can show about spots: the v2 migration of a v1 file, and
/// the number of queries a page of spots costs.
@Suite struct SQLiteCatalogSpotTests {
    @Test func migratingAVersion1FileDerivesTheLocationOfExistingSpots() async throws {
        // A catalog as version 1 wrote it: two spots, one scattered, one without GPS.
        try await withSQLiteFile(migratedUpTo: "v1") { db in
            for spot in ["eiffel", "attic"] {
                try db.execute(
                    sql: "INSERT INTO spots (bucket, id, owner, createdAt) VALUES ('spots', ?, 'alice', '2024-01-01 00:00:00.000')",
                    arguments: [spot])
            }
            let objects: [(name: String, seed: Int, createdAt: String)] = [
                ("eiffel/b.jpg", 1, "2024-01-01 00:00:01.000"), ("eiffel/a.jpg", 2, "2024-01-01 00:00:01.000"),
                ("eiffel/c.jpg", 3, "2024-01-01 00:00:03.000"), ("attic/1.jpg", 4, "2024-01-01 00:00:04.000"),
            ]
            for object in objects {
                try db.execute(
                    sql: """
                        INSERT INTO objects (bucket, name, spotId, digest, size, contentType, owner, createdAt, updatedAt)
                        VALUES ('spots', ?, ?, ?, 1, 'image/jpeg', 'alice', ?, ?)
                        """,
                    arguments: [object.name, try path(object.name).topFolder, digest(object.seed).hex, object.createdAt, object.createdAt])
            }
            // a (first: as old as b, and first by name) and b are 0.1 km apart, c is 5 km
            // from them; the attic photo has no GPS.
            let photos: [(seed: Int, latitude: Double?, longitude: Double?)] = [
                (1, 48.8584 + 0.1 / kmPerDegree, 2.2945), (2, 48.8584, 2.2945), (3, 48.8584 + 5 / kmPerDegree, 2.2945), (4, nil, nil),
            ]
            for photo in photos {
                try db.execute(
                    sql: "INSERT INTO photos (digest, width, height, orientation, latitude, longitude) VALUES (?, 10, 10, 1, ?, ?)",
                    arguments: [digest(photo.seed).hex, photo.latitude, photo.longitude])
            }
        } _: { file in
            let catalog = try SQLiteCatalog(path: file)
            let eiffel = try #require(try await catalog.spotDetails(bucket: "spots", id: "eiffel"))
            #expect(eiffel.location == GeoPoint(latitude: 48.8584, longitude: 2.2945))
            #expect(eiffel.scattered)
            #expect(eiffel.place == nil)
            #expect(eiffel.objects.map(\.path.name) == ["eiffel/a.jpg", "eiffel/b.jpg", "eiffel/c.jpg"])
            #expect(eiffel.objects[0].photo?.place == nil)
            let attic = try #require(try await catalog.spotDetails(bucket: "spots", id: "attic"))
            #expect(attic.location == nil)
            #expect(attic.scattered == false)
            #expect(try await catalog.findSpots(CatalogSpotSearchTests.near(48.8584, 2.2945, 1)).spots.map(\.id) == ["eiffel"])

            // Removing c, the spot is no longer scattered: the v2 columns are maintained.
            _ = try await catalog.removeObject(at: path("eiffel/c.jpg"))
            #expect(try await catalog.spotDetails(bucket: "spots", id: "eiffel")?.scattered == false)
        }
    }

    @Test func migratingAVersion2FileMakesASpotOfEveryTopFolder() async throws {
        // Version 2 recorded spots only under a count limit: `users/bob` has none.
        try await withSQLiteFile(migratedUpTo: "v2") { db in
            let objects: [(name: String, owner: String, seed: Int, createdAt: String)] = [
                ("bob/b.jpg", "carol", 1, "2024-01-01 00:00:02.000"), ("bob/a.jpg", "bob", 2, "2024-01-01 00:00:01.000"),
                ("loose.txt", "bob", 3, "2024-01-01 00:00:03.000"),
            ]
            for object in objects {
                try db.execute(
                    sql: """
                        INSERT INTO objects (bucket, name, spotId, digest, size, contentType, owner, createdAt, updatedAt)
                        VALUES ('users', ?, ?, ?, 1, 'image/jpeg', ?, ?, ?)
                        """,
                    arguments: [object.name, try path(object.name).topFolder, digest(object.seed).hex, object.owner, object.createdAt, object.createdAt])
            }
            try db.execute(
                sql: "INSERT INTO photos (digest, width, height, orientation, latitude, longitude) VALUES (?, 10, 10, 1, 48.8584, 2.2945)",
                arguments: [digest(1).hex])
        } _: { file in
            let catalog = try SQLiteCatalog(path: file)
            let spot = try await catalog.spot(bucket: "users", id: "bob")
            #expect(spot == SpotState(bucket: "users", id: "bob", owner: "bob", objectCount: 2))
            #expect(try await catalog.spotDetails(bucket: "users", id: "bob")?.location == GeoPoint(latitude: 48.8584, longitude: 2.2945))
            #expect(try await catalog.spot(bucket: "users", id: "loose.txt") == nil)
        }
    }

    @Test func photosAsOldAsEachOtherGoByName() async throws {
        let catalog = try SQLiteCatalog.inMemory()
        func setCreatedAt(_ date: String, of name: String) async throws {
            try await catalog.database.dbWriter.write { db in
                try db.execute(sql: "UPDATE objects SET created_at = ? WHERE name = ?", arguments: [date, name])
            }
        }
        /// Re-derives the location by replacing an object without GPS.
        func location() async throws -> GeoPoint? {
            _ = try await catalog.commit(upload("tie/c.jpg", seed: 3), admission: SpotAdmission(maxObjects: 4))
            return try await catalog.spotDetails(bucket: "spots", id: "tie")?.location
        }
        _ = try await catalog.commit(upload("tie/b.jpg", seed: 1, photo: photo(at: 10, 10)), admission: SpotAdmission(maxObjects: 4))
        _ = try await catalog.commit(upload("tie/a.jpg", seed: 2, photo: photo(at: 20, 20)), admission: SpotAdmission(maxObjects: 4))
        _ = try await catalog.commit(upload("tie/c.jpg", seed: 3), admission: SpotAdmission(maxObjects: 4))
        try await setCreatedAt("2024-01-01 00:00:00.000", of: "tie/a.jpg")
        try await setCreatedAt("2024-01-01 00:00:00.000", of: "tie/b.jpg")
        #expect(try await location() == GeoPoint(latitude: 20, longitude: 20))
        try await setCreatedAt("2023-12-31 23:59:59.999", of: "tie/b.jpg")
        #expect(try await location() == GeoPoint(latitude: 10, longitude: 10))
    }

    @Test func aPageOfSpotsCostsTheSameFewQueriesWhateverItHolds() async throws {
        let counter = SelectCounter()
        var configuration = SQLiteDatabase.makeConfiguration()
        configuration.prepareDatabase { db in
            db.trace { event in
                if case .statement(let statement) = event, statement.sql.uppercased().hasPrefix("SELECT") { counter.add() }
            }
        }
        let catalog = SQLiteCatalog(try SQLiteDatabase(DatabaseQueue(configuration: configuration)))
        for spot in 0..<30 {
            for index in 0..<3 {
                let seed = spot * 10 + index
                _ = try await catalog.commit(
                    upload("s\(spot)/\(index).jpg", seed: seed, photo: photo(at: 10 + Double(spot) / 100, 20, city: "Paris"),
                           thumbnails: [thumbnail(256, seed: 1000 + seed)]),
                    admission: SpotAdmission(maxObjects: 4))
            }
        }
        func selects(_ query: SpotQuery) async throws -> Int {
            counter.reset()
            let page = try await catalog.findSpots(query)
            #expect(page.spots.count == query.maxResults)
            #expect(page.spots.allSatisfy { $0.objects.count == 3 && $0.objects.allSatisfy { $0.thumbnails.count == 1 } })
            return counter.count
        }
        let city = { (size: Int) in SpotQuery(bucket: "spots", criterion: .city("paris"), maxResults: size) }
        let near = { (size: Int) in CatalogSpotSearchTests.near(10, 20, 500, maxResults: size) }
        _ = try await selects(city(1))  // warms GRDB's schema cache
        let (cityOne, cityMany) = (try await selects(city(1)), try await selects(city(30)))
        let (nearOne, nearMany) = (try await selects(near(1)), try await selects(near(30)))
        #expect(cityOne == cityMany)
        #expect(nearOne == nearMany)
        #expect(cityMany <= 4, "\(cityMany) queries")
        #expect(nearMany <= 5, "\(nearMany) queries")
        counter.reset()
        _ = try await catalog.spotDetails(bucket: "spots", id: "s1")
        #expect(counter.count <= 4)
    }

    /// A write's cost does not grow with its spot: committing, replacing, updating and
    /// removing objects of a spot, and reading the spot, a page of its folder or a search,
    /// take as many steps of SQLite's virtual machine (the work of a statement, rows
    /// visited included, the same on every machine) in a spot of 150 objects as in one of
    /// 1,500 (the same to a few steps).
    @Test func writesAndReadsInASpotOf1500ObjectsWorkAsMuchAsInOneOf150() async throws {
        let small = try await Self.stepsOfEachOperation(inASpotOf: 150)
        let big = try await Self.stepsOfEachOperation(inASpotOf: 1500)
        #expect(small.map(\.name) == big.map(\.name))
        // A seek that ends past an index's last entry takes a step less than one that stops
        // inside it: a few steps either way are where the keys fell, not more work.
        for (operation, steps) in zip(small, big) {
            #expect(abs(operation.steps - steps.steps) <= 5, "\(operation.name): \(operation.steps) steps in the small spot, \(steps.steps) in the big one")
        }
    }

    /// The virtual machine steps of each write and read of `stepsOfEachOperation`, on a
    /// spot of `size` objects, one in three geotagged within 330 m of the first.
    static func stepsOfEachOperation(inASpotOf size: Int) async throws -> [(name: String, steps: Int64)] {
        let (catalog, counter) = try countedCatalog()
        let admission = SpotAdmission(maxObjects: 10_000)
        func upload(_ name: String, seed: Int, photo: PhotoMetadata? = nil) throws -> NewObject { try uniqueUpload(name, seed: seed, photo: photo) }
        for index in 0..<size {
            let geotag = index % 3 == 0 ? photo(at: 48.85 + Double(index % 30) / 10_000, 2.35, city: "Paris") : nil
            _ = try await catalog.commit(upload("big/\(10_000 + index).jpg", seed: index, photo: geotag), admission: admission)
        }
        let stored = try #require(try await catalog.object(at: path("big/10002.jpg")))
        let operations: [(name: String, run: () async throws -> Void)] = [
            ("commit of a geotagged photo", { _ = try await catalog.commit(upload("big/new.jpg", seed: 100_000, photo: photo(at: 48.86, 2.36)), admission: admission) }),
            ("replacement of the first photo", { _ = try await catalog.commit(upload("big/10000.jpg", seed: 100_001, photo: photo(at: 48.851, 2.351)), admission: admission) }),
            ("replacement without a photo", { _ = try await catalog.commit(upload("big/10001.jpg", seed: 100_002), admission: admission) }),
            ("metadata update", { _ = try await catalog.updateMetadata(of: stored.path, generation: stored.generation, contentType: "image/png", settings: ObjectSettings()) }),
            ("removal of the first photo", { _ = try await catalog.removeObject(at: path("big/10000.jpg")) }),
            ("removal of another", { _ = try await catalog.removeObject(at: path("big/10004.jpg")) }),
            ("the spot's state", { _ = try await catalog.spot(bucket: "spots", id: "big") }),
            ("an object to read", { _ = try await catalog.objectForReading(at: path("big/10005.jpg")) }),
            ("the spot's details", { _ = try await catalog.spotDetails(bucket: "spots", id: "big") }),
            ("a page of the folder", { _ = try await catalog.list(ListQuery(bucket: "spots", prefix: "big/", maxResults: 10)) }),
            ("a search by city", { _ = try await catalog.findSpots(SpotQuery(bucket: "spots", criterion: .city("paris"))) }),
            ("a search near a point", { _ = try await catalog.findSpots(CatalogSpotSearchTests.near(48.85, 2.35, 5, maxResults: 10)) }),
        ]
        var steps: [(name: String, steps: Int64)] = []
        for operation in operations {
            counter.reset()
            try await operation.run()
            steps.append((operation.name, counter.total))
        }
        return steps
    }
}

extension SQLiteCatalogSpotTests {
    /// A search near a point visits the spots near it: ten times as many spots at the same
    /// latitudes far to the east add no steps of SQLite's virtual machine.
    @Test func aSearchNearAPointVisitsNoSpotAtItsLatitudesElsewhere() async throws {
        func steps(withSpotsElsewhere count: Int) async throws -> Int64 {
            let (catalog, counter) = try Self.countedCatalog()
            for index in 0..<(20 + count) {
                let latitude = 48.85 + Double(index % 10) / 1000
                let longitude = index < 20 ? 2.35 + Double(index) / 1000 : 10 + Double(index) / 100
                _ = try await catalog.commit(
                    Self.uniqueUpload("s\(index)/photo.jpg", seed: index, photo: photo(at: latitude, longitude)),
                    admission: SpotAdmission(maxObjects: 10))
            }
            counter.reset()
            let page = try await catalog.findSpots(CatalogSpotSearchTests.near(48.85, 2.35, 5, maxResults: 50))
            #expect(page.spots.count == 20)
            return counter.total
        }
        let few = try await steps(withSpotsElsewhere: 100)
        let many = try await steps(withSpotsElsewhere: 1000)
        #expect(abs(few - many) <= 5, "\(few) steps beside 100 spots elsewhere, \(many) beside 1,000")
    }

    /// A catalog in memory whose statements' steps `StepCounter` counts.
    static func countedCatalog() throws -> (SQLiteCatalog, StepCounter) {
        let counter = StepCounter()
        var configuration = SQLiteDatabase.makeConfiguration()
        configuration.prepareDatabase { db in counter.watch(db) }
        return (SQLiteCatalog(try SQLiteDatabase(DatabaseQueue(configuration: configuration))), counter)
    }

    /// An upload whose bytes are its seed's own (`digest(_:)` repeats after 256 seeds).
    static func uniqueUpload(_ name: String, seed: Int, photo: PhotoMetadata? = nil) throws -> NewObject {
        var object = try CatalogsTests.upload(name, seed: seed, photo: photo)
        object.digest = Digest(bytes: withUnsafeBytes(of: UInt64(seed).littleEndian, Array.init) + Array(repeating: 7, count: 24))
        return object
    }
}

/// Counts the steps of SQLite's virtual machine that the statements of watched
/// connections take.
final class StepCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var steps: Int64 = 0

    var total: Int64 { lock.withLock { steps } }
    func reset() { lock.withLock { steps = 0 } }

    /// Adds the steps of every statement `db` runs from now on (its trace is this counter's).
    func watch(_ db: Database) {
        sqlite3_trace_v2(db.sqliteConnection, UInt32(SQLITE_TRACE_PROFILE), { _, context, statement, _ in
            guard let context, let statement else { return 0 }
            let steps = Int64(sqlite3_stmt_status(OpaquePointer(statement), SQLITE_STMTSTATUS_VM_STEP, 1))
            Unmanaged<StepCounter>.fromOpaque(context).takeUnretainedValue().add(steps)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func add(_ count: Int64) { lock.withLock { steps += count } }
}

/// Counts statements (SELECTs, or what a test picks) from any connection.
final class SelectCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    var count: Int { lock.withLock { value } }
    func add() { lock.withLock { value += 1 } }
    func reset() { lock.withLock { value = 0 } }
}

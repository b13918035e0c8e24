import Catalogs
import SQLCatalog
import Conformance
import Foundation
@testable import PostgresCatalog
import PostgresNIO
import SpotCore
import Testing
import TestSupport

/// What only the PostgreSQL catalog can show: several catalogs (processes) on one
/// database, its start-up errors, a database that goes away, index use of spot search, and
/// the import of a catalog batch by batch.
/// Left out without a server (see `PostgresTestServer`).
@Suite(.enabled(if: PostgresTestServer.isEnabled)) struct PostgresCatalogTests {
    @Test func aMalformedURLIsRefusedSayingWhatAURLLooksLike() async throws {
        for url in ["mysql://a@b/c", "postgres://host/db", "postgres://user@/db", "postgres://user@host", "postgres://user@host/db?ssl=1", "nonsense"] {
            let error = await #expect(throws: SpotError.self, "\(url)") {
                try await PostgresCatalog.connect(url: url, logger: PostgresTestServer.logger)
            }
            #expect(error?.kind == .badRequest)
            #expect(error?.message.contains("postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE") == true)
        }
    }

    @Test func urlsAreParsedWithDefaultsAndPercentDecoding() throws {
        let url = try PostgresURL("postgresql://sp%40t:p%3Ass%2Fw@db.example:6543/spots")
        #expect([url.host, "\(url.port)", url.user, url.password, url.database] == ["db.example", "6543", "sp@t", "p:ss/w", "spots"])
        #expect(!url.requiresTLS)
        let defaults = try PostgresURL("postgres://spotstore@127.0.0.1/spotstore?sslmode=require")
        #expect(defaults.port == 5432 && defaults.password == nil && defaults.requiresTLS)
    }

    @Test func aServerThatIsNotRunningIsNamed() async throws {
        // A port nothing listens on: bound and released.
        let port = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let number = try #require(port.localAddress?.port)
        try await port.close()
        let error = await #expect(throws: SpotError.self) {
            try await PostgresCatalog.connect(url: "postgres://spotstore:x@127.0.0.1:\(number)/spotstore", logger: PostgresTestServer.logger)
        }
        #expect(error?.message.hasPrefix("cannot reach PostgreSQL at 127.0.0.1:\(number): is it running?") == true)
    }

    @Test func aWrongPasswordIsNamed() async throws {
        var url = try #require(URLComponents(string: try PostgresTestServer.requiredURL()))
        url.password = "not-the-password"
        let error = await #expect(throws: SpotError.self, "the test server must authenticate by password") {
            try await PostgresCatalog.connect(url: try #require(url.string), logger: PostgresTestServer.logger)
        }
        #expect(error?.message.contains("check the user and password in --catalog") == true)
    }

    @Test func aMissingDatabaseIsNamedWithHowToCreateIt() async throws {
        let error = await #expect(throws: SpotError.self) {
            try await PostgresCatalog.connect(url: try PostgresTestServer.url(ofDatabase: "spotstore_missing"), logger: PostgresTestServer.logger)
        }
        #expect(error?.message.contains("create it first: createdb spotstore_missing") == true)
    }

    /// Servers starting at once on an empty database: one migrates it, each version once,
    /// and every server then works on the same schema.
    @Test func serversStartingAtOnceMigrateOnce() async throws {
        let database = try await PostgresTestServer.createDatabase()
        let url = try PostgresTestServer.url(ofDatabase: database)
        let catalogs = try await withThrowingTaskGroup(of: PostgresCatalog.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresCatalog.connect(url: url, logger: PostgresTestServer.logger) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let applied = try await PostgresTestServer.withAdminConnection(database: database) { connection in
            try await connection.query("SELECT version FROM migrations ORDER BY version", logger: PostgresTestServer.logger)
                .collect().map { try $0.decode(Int.self) }
        }
        #expect(applied == PostgresDatabase.migrations.map(\.version))
        for (index, catalog) in catalogs.enumerated() {
            _ = try await catalog.addUser("user\(index)", tokenDigest: digest(index))
        }
        #expect(try await catalogs[0].users().map(\.uid) == ["user0", "user1", "user2", "user3"])
        for catalog in catalogs { await catalog.close() }
        try await PostgresTestServer.dropDatabase(database)
    }

    /// `spotstore migrate` copies the catalog a batch of rows at a time: copied two rows at
    /// a time, every table holds every row once, and the objects are the same.
    @Test func aCatalogCopiedInBatchesHoldsEveryRowOnce() async throws {
        let source = try SQLiteCatalog.inMemory()
        for (index, uid) in ["alice", "bob", "carol"].enumerated() { _ = try await source.addUser(uid, tokenDigest: digest(200 + index)) }
        for index in 0..<7 {
            _ = try await source.commit(
                upload("s\(index % 3)/\(index).jpg", seed: index, photo: photo(at: 48.85 + Double(index) / 100, 2.35, city: "Paris")),
                admission: SpotAdmission(maxObjects: 10))
        }
        try await PostgresTestServer.withCatalog { destination in
            try await destination.importTables { name, after in try source.exportRows(of: name, after: after, limit: 2) } copied: { _, _ in }
            #expect(try await destination.rowCounts() == (try await source.rowCounts()))
            let query = ListQuery(bucket: "spots", maxResults: 100)
            // Times keep their milliseconds, as Dates they may differ in the last bits.
            let fields = { (object: StoredObject) in "\(object.path) \(object.digest) \(object.size) \(object.owner) \(String(describing: object.photo))" }
            #expect(try await destination.list(query).items.map(fields) == (try await source.list(query).items.map(fields)))
        }
    }

    /// Connections killed under the catalog fail an operation or two with a clear error,
    /// then it carries on; a dropped database fails every operation within the wait, and
    /// the catalog still closes.
    @Test func aDatabaseThatGoesAwayGivesClearErrorsAndNoHang() async throws {
        let database = try await PostgresTestServer.createDatabase()
        let catalog = try await PostgresCatalog.connect(
            url: try PostgresTestServer.url(ofDatabase: database), logger: PostgresTestServer.logger, connectionWait: .seconds(3))
        _ = try await catalog.addUser("alice", tokenDigest: digest(1))

        try await PostgresTestServer.withAdminConnection { admin in
            try await admin.query("""
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(database) AND pid <> pg_backend_pid()
                """, logger: PostgresTestServer.logger)
        }
        var failures = 0
        while failures < 20 {
            do {
                #expect(try await catalog.user(tokenDigest: digest(1))?.uid == "alice")
                break
            } catch let error as SpotError {
                #expect(error.kind == .unavailable, "\(error)")
                failures += 1
            }
        }
        #expect(failures < 20, "the catalog connects again")

        try await PostgresTestServer.dropDatabase(database)
        let started = ContinuousClock.now
        let error = await #expect(throws: SpotError.self) { try await catalog.addToken(for: "alice", tokenDigest: digest(2)) }
        #expect(error?.kind == .unavailable)
        #expect(ContinuousClock.now - started < .seconds(15))
        await catalog.close()
    }

    /// Spot search by city and by distance reads ranges of indexes: `EXPLAIN` of the
    /// statements the catalog sends, over a few thousand spots, shows no sequential scan.
    @Test func spotSearchesUseIndexes() async throws {
        let scratch = PostgresTestServer.Scratch()
        do {
            let catalog = try await scratch.catalog(onNewDatabase: true)
            try await explainSpotSearches(in: try #require(scratch.databases.last), catalog)
            #expect(try await catalog.findSpots(SpotQuery(bucket: "spots", criterion: .city("city 7"))).spots.count > 0)
        } catch {
            await scratch.cleanUp()
            throw error
        }
        await scratch.cleanUp()
    }

    private func explainSpotSearches(in database: String, _ catalog: PostgresCatalog) async throws {
        try await PostgresTestServer.withAdminConnection(database: database) { connection in
            try await connection.query("""
                INSERT INTO spots (bucket, id, owner, created_at, latitude, longitude, city, city_key, has_place)
                SELECT 'spots', 'spot' || n, 'alice', now(), 40 + (n % 100) * 0.1, -5 + (n / 100) * 0.1, 'City ' || (n % 300),
                       'city ' || (n % 300), true
                FROM generate_series(1, 4000) AS n
                """, logger: PostgresTestServer.logger)
            try await connection.query("ANALYZE spots", logger: PostgresTestServer.logger)
            let city = try SpotSearchPlan(SpotQuery(bucket: "spots", criterion: .city("City 7")))
            let near = try SpotSearchPlan(SpotQuery(bucket: "spots", criterion: .near(latitude: 44, longitude: -3, radiusKm: 5)))
            guard case .city(let key, _) = city.criterion, case .near(_, _, let box, _) = near.criterion else {
                Issue.record("a city and a near search make other plans")
                return
            }
            for (name, query) in [
                ("city", PostgresCatalog.cityQuery(plan: city, key: key, afterId: nil)),
                ("city, next page", PostgresCatalog.cityQuery(plan: city, key: key, afterId: "spot1000")),
                ("near", PostgresCatalog.nearQuery(bucket: "spots", box: box)),
            ] {
                let plan = try await catalog.database.read { transaction in
                    try await transaction.rows("EXPLAIN " + query).map { try $0(0) as String }.joined(separator: "\n")
                }
                print("EXPLAIN of the \(name) search:\n\(plan)")
                #expect(!plan.contains("Seq Scan"), "\(name): \(plan)")
                #expect(plan.contains("spots_on_bucket_"), "\(name): \(plan)")
            }
        }
    }
}

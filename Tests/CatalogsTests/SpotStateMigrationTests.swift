@testable import Catalogs
import Foundation
import GRDB
@testable import PostgresCatalog
import SpotCore
import Testing
import TestSupport

/// The migration that keeps spot state as it changes (SQLite v14, PostgreSQL v9) counts
/// every spot's objects and gives every object its photo's valid position, so the catalog
/// goes on from there as if it had always kept them.
@Suite struct SpotStateMigrationTests {
    /// Spot `pont` with three objects: `a.jpg` geotagged (the first), `b.jpg` geotagged
    /// 120 m north, `c.txt` without a photo; and `d.jpg`, whose photo is at (0, 0), which
    /// is no position.
    static let rows: [String] = {
        let photo = "INSERT INTO photos (digest, width, height, orientation, latitude, longitude, has_place) VALUES"
        let object = "INSERT INTO objects (bucket, name, spot_id, digest, size, content_type, owner, created_at, updated_at, generation, metageneration) VALUES"
        return [
            "INSERT INTO users (uid, created_at) VALUES ('alice', '2026-01-01 00:00:00.000')",
            """
            INSERT INTO spots (bucket, id, owner, created_at, latitude, longitude)
            VALUES ('spots', 'pont', 'alice', '2026-01-01 00:00:00.000', 48.8566, 2.3522)
            """,
            "\(photo) ('\(digest(1).hex)', 4, 3, 1, 48.8566, 2.3522, false)",
            "\(photo) ('\(digest(2).hex)', 4, 3, 1, 48.8577, 2.3522, false)",
            "\(photo) ('\(digest(4).hex)', 4, 3, 1, 0, 0, false)",
            "\(object) ('spots', 'pont/a.jpg', 'pont', '\(digest(1).hex)', 10, 'image/jpeg', 'alice', '2026-01-01 00:00:01.000', '2026-01-01 00:00:01.000', 1, 1)",
            "\(object) ('spots', 'pont/b.jpg', 'pont', '\(digest(2).hex)', 10, 'image/jpeg', 'alice', '2026-01-01 00:00:02.000', '2026-01-01 00:00:02.000', 2, 1)",
            "\(object) ('spots', 'pont/c.txt', 'pont', '\(digest(3).hex)', 10, 'text/plain', 'alice', '2026-01-01 00:00:03.000', '2026-01-01 00:00:03.000', 3, 1)",
            "\(object) ('spots', 'pont/d.jpg', 'pont', '\(digest(4).hex)', 10, 'image/jpeg', 'alice', '2026-01-01 00:00:04.000', '2026-01-01 00:00:04.000', 4, 1)",
        ]
    }()

    @Test func aVersion13SQLiteFileCountsItsSpotsAndPositionsItsObjects() async throws {
        try await withSQLiteFile(migratedUpTo: "v13") { db in
            for statement in Self.rows { try db.execute(sql: statement) }
        } _: { file in
            try await Self.checkMigrated(try SQLiteCatalog(path: file))
        }
    }

    @Test(.enabled(if: PostgresTestServer.isEnabled))
    func aVersion8PostgreSQLDatabaseCountsItsSpotsAndPositionsItsObjects() async throws {
        try await withPostgresDatabase(migratedUpTo: 8, rows: Self.rows) { catalog, _ in
            try await Self.checkMigrated(catalog)
        }
    }

    /// The spot counts its four objects, fsck finds nothing to repair, and the location
    /// follows the positions the migration gave: without `a.jpg`, `b.jpg` leads.
    static func checkMigrated(_ catalog: some Catalog) async throws {
        #expect(try await catalog.spot(bucket: "spots", id: "pont")?.objectCount == 4)
        #expect(try await catalog.referenceIssues().isEmpty)
        _ = try await catalog.removeObject(at: path("pont/a.jpg"))
        let spot = try #require(try await catalog.spotDetails(bucket: "spots", id: "pont"))
        #expect(spot.objectCount == 3)
        #expect(spot.location == GeoPoint(latitude: 48.8577, longitude: 2.3522))
        _ = try await catalog.removeObject(at: path("pont/b.jpg"))
        #expect(try await catalog.spotDetails(bucket: "spots", id: "pont")?.location == nil)
        #expect(try await catalog.referenceIssues().isEmpty)
    }
}

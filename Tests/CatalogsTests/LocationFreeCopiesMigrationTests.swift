@testable import Catalogs
import Foundation
import GRDB
@testable import PostgresCatalog
import SpotCore
import Testing
import TestSupport

/// Location-free copies made before XMP and Photoshop resources were dropped can still
/// hold a position: the migration (SQLite v12, PostgreSQL v8) forgets every one, so the
/// next download makes a new copy.
@Suite struct LocationFreeCopiesMigrationTests {
    @Test func aVersion10SQLiteFileForgetsItsLocationFreeCopies() async throws {
        try await withSQLiteFile(migratedUpTo: "v10") { db in
            try db.execute(sql: "INSERT INTO locationFreeBlobs (digest, freeDigest) VALUES (?, ?)", arguments: [digest(1).hex, digest(2).hex])
        } _: { file in
            let old = try DatabaseQueue(path: file)
            #expect(try await old.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM locationFreeBlobs") } == 1)
            try old.close()
            let catalog = try SQLiteCatalog(path: file)
            #expect(try await catalog.locationFreeDigest(of: digest(1)) == nil)
        }
    }

    @Test(.enabled(if: PostgresTestServer.isEnabled))
    func aVersion6PostgreSQLDatabaseForgetsItsLocationFreeCopies() async throws {
        try await withPostgresDatabase(migratedUpTo: 6, rows: [
            "INSERT INTO location_free_blobs (digest, free_digest) VALUES ('\(digest(1).hex)', '\(digest(2).hex)')",
        ]) { catalog, _ in
            let free = try await catalog.locationFreeDigest(of: digest(1))
            #expect(free == nil)
        }
    }
}

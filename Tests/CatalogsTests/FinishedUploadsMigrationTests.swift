@testable import Catalogs
import Foundation
@testable import PostgresCatalog
import SpotCore
import Testing
import TestSupport

/// Catalogs made before finished uploads were recorded (SQLite v8, PostgreSQL v4): a
/// session started then is recorded as finished when it is committed now.
@Suite struct FinishedUploadsMigrationTests {
    /// Commits the session `s1` that the old catalog holds, for `spot/b.jpg`, started by alice.
    static func checkMigrated(_ catalog: any Catalog) async throws {
        var object = NewObject(path: try path("spot/b.jpg"), digest: digest(2), size: 10, contentType: "image/jpeg", owner: "alice")
        object.generation = 42
        object.uploadSession = "s1"
        let stored = try await catalog.commit(object, admission: SpotAdmission(maxObjects: 1))
        #expect(try await catalog.uploadSession("s1") == nil)
        #expect(try await catalog.finishedUpload("s1") == FinishedUpload(
            id: "s1", owner: "alice", path: object.path, generation: 42, size: 10, finishedAt: stored.updatedAt))
        #expect(try await catalog.forgetFinishedUploads(finishedBefore: .distantFuture) == 1)
    }

    @Test func aVersion8SQLiteFileRecordsFinishedUploads() async throws {
        try await withSQLiteFile(migratedUpTo: "v8") { db in
            try db.execute(sql: sqliteUploadSessionRow(declaring: "10"))
        } _: { file in
            try await Self.checkMigrated(try SQLiteCatalog(path: file))
        }
    }

    @Test(.enabled(if: PostgresTestServer.isEnabled))
    func aVersion4PostgreSQLDatabaseRecordsFinishedUploads() async throws {
        try await withPostgresDatabase(migratedUpTo: 4, rows: [postgresUploadSessionRow(declaring: "10")]) { catalog, _ in
            try await Self.checkMigrated(catalog)
        }
    }
}

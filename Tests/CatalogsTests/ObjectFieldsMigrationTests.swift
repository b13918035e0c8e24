@testable import Catalogs
import SQLCatalog
import Foundation
import GRDB
@testable import PostgresCatalog
import PostgresNIO
import SpotCore
import Testing
import TestSupport

/// Catalogs made before objects had Firebase's fields and uploads could resume (SQLite v7,
/// PostgreSQL v3): their objects get their update time in microseconds as generation and
/// metageneration 1, no MD5 and no settings; upload sessions work at once.
@Suite struct ObjectFieldsMigrationTests {
    /// 2024-01-01 00:00:00.123 UTC in microseconds since 1970.
    static let generation: Int64 = 1_704_067_200_123_000

    /// What a migrated catalog must show of its object `a.jpg`, and that sessions work.
    static func checkMigrated(_ catalog: any Catalog) async throws {
        let object = try #require(try await catalog.object(at: path("a.jpg")))
        #expect(object.generation == Self.generation)
        #expect(object.generation == Int64((object.updatedAt.timeIntervalSince1970 * 1_000_000).rounded()))
        #expect(object.metageneration == 1 && object.md5 == nil && object.settings.isEmpty)
        let updated = try await catalog.updateMetadata(
            of: path("a.jpg"), generation: Self.generation, contentType: "image/png", settings: ObjectSettings(cacheControl: "no-cache"))
        #expect(updated?.metageneration == 2 && updated?.generation == Self.generation)

        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let session = UploadSession(
            id: "s1", path: try path("spot/b.jpg"), owner: "alice", declaredSize: 10, admission: SpotAdmission(maxObjects: 1),
            terms: "{}", createdAt: start, expiresAt: start.addingTimeInterval(60))
        try await catalog.startUpload(session, now: start)
        #expect(try await catalog.uploadSession("s1") == session)
    }

    /// The objects columns the SQLite catalog exports for `spotstore migrate`, in snake case.
    static func sqliteObjectColumns() throws -> Set<String> {
        Set(try SQLiteCatalog.inMemory().exportRows(of: "objects", after: 0, limit: 1).table.columns)
    }

    @Test func aVersion7SQLiteFileGetsGenerationsAndSessions() async throws {
        try await withSQLiteFile(migratedUpTo: "v7") { db in
            try db.execute(sql: """
                INSERT INTO objects (bucket, name, digest, size, contentType, owner, createdAt, updatedAt)
                VALUES ('spots', 'a.jpg', ?, 1, 'image/jpeg', 'alice', '2023-06-01 10:00:00.000', '2024-01-01 00:00:00.123')
                """, arguments: [digest(1).hex])
        } _: { file in
            try await Self.checkMigrated(try SQLiteCatalog(path: file))
            #expect(try Self.sqliteObjectColumns().isSuperset(of: ["md5", "settings_json", "generation", "metageneration"]))
        }
    }

    /// A database as version 3 left it, with an object.
    @Test(.enabled(if: PostgresTestServer.isEnabled))
    func aVersion3PostgreSQLDatabaseGetsGenerationsAndSessions() async throws {
        try await withPostgresDatabase(migratedUpTo: 3, rows: [
            """
            INSERT INTO objects (bucket, name, digest, size, content_type, owner, created_at, updated_at)
            VALUES ('spots', 'a.jpg', '\(digest(1).hex)', 1, 'image/jpeg', 'alice', '2023-06-01 10:00:00+00', '2024-01-01 00:00:00.123+00')
            """,
        ]) { catalog, database in
            try await Self.checkMigrated(catalog)
            // `spotstore migrate` copies objects column by column by name: both backends have the same.
            let columns = try await PostgresTestServer.withAdminConnection(database: database) { connection in
                Set(try await connection.query("""
                    SELECT column_name::text FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'objects'
                    """, logger: PostgresTestServer.logger).collect().map { try $0.decode(String.self) })
            }
            #expect(columns == (try Self.sqliteObjectColumns()))
        }
    }
}

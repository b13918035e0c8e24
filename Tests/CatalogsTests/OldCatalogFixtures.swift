@testable import Catalogs
import Foundation
import GRDB
@testable import PostgresCatalog
import PostgresNIO
import Testing
import TestSupport

/// Runs `body` with the path of a catalog file as SQLite migration `version` left it, with
/// the rows `setUp` wrote then.
func withSQLiteFile(migratedUpTo version: String, _ setUp: @escaping @Sendable (Database) throws -> Void, _ body: (String) async throws -> Void) async throws {
    try await withTemporaryDirectory { folder in
        let file = folder.appendingPathComponent("catalog.sqlite").path
        do {
            let old = try DatabaseQueue(path: file, configuration: SQLiteDatabase.makeConfiguration())
            try SQLiteDatabase.migrator.migrate(old, upTo: version)
            try await old.write(setUp)
        }
        try await body(file)
    }
}

/// Runs `body` with a catalog connected to a new database as PostgreSQL migration
/// `version` left it, holding the rows the SQL `statements` wrote then, and the name of the
/// database; drops the database afterwards.
func withPostgresDatabase(
    migratedUpTo version: Int, rows statements: [String], _ body: (PostgresCatalog, String) async throws -> Void
) async throws {
    let scratch = PostgresTestServer.Scratch()
    do {
        _ = try await scratch.catalog(onNewDatabase: true)
        let database = try #require(scratch.databases.last)
        try await PostgresTestServer.withAdminConnection(database: database) { connection in
            let migrations = PostgresDatabase.migrations.filter { $0.version <= version }
            let schema = ["DROP SCHEMA public CASCADE", "CREATE SCHEMA public",
                          "CREATE TABLE migrations (version bigint PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"]
                + migrations.flatMap(\.statements) + migrations.map { "INSERT INTO migrations (version) VALUES (\($0.version))" }
            for statement in schema + statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresTestServer.logger)
            }
        }
        try await body(try await scratch.catalog(onNewDatabase: false), database)
    } catch {
        await scratch.cleanUp()
        throw error
    }
    await scratch.cleanUp()
}

/// The row of upload session `s1` into `spots/spot/b.jpg`, started by alice in 2096 declaring
/// `size` bytes (`NULL`: not yet known), as SQLite's `uploadSessions` (v8 on) holds it.
func sqliteUploadSessionRow(declaring size: String) -> String {
    """
    INSERT INTO uploadSessions (id, bucket, name, spotId, owner, declaredSize, maxObjects, requiresOwnership, terms, createdAt, expiresAt)
    VALUES ('s1', 'spots', 'spot/b.jpg', 'spot', 'alice', \(size), 1, 0, '{}', '2096-01-01 00:00:00.000', '2096-01-01 01:00:00.000')
    """
}

/// The same session as PostgreSQL's `upload_sessions` (v4 on) holds it.
func postgresUploadSessionRow(declaring size: String) -> String {
    """
    INSERT INTO upload_sessions (
        id, bucket, name, spot_id, owner, declared_size, max_objects, requires_ownership, terms, created_at, expires_at)
    VALUES ('s1', 'spots', 'spot/b.jpg', 'spot', 'alice', \(size), 1, false, '{}', '2096-01-01 00:00:00+00', '2096-01-01 01:00:00+00')
    """
}

@testable import Catalogs
import Foundation
import GRDB
@testable import PostgresCatalog
import PostgresNIO
import SpotCore
import Testing
import TestSupport

/// Runs `body` with the path of a copy of a real catalog file as SQLite migration `version`
/// left it, holding the rows `setUp` wrote then: `fixtures/catalogs/<test>.sqlite`, named
/// by the calling test. The file is made once, by the shipped migrations, and kept, so a
/// later edit of a shipped migration cannot change what the test starts from. Set
/// `SPOTSTORE_MAKE_CATALOG_FIXTURES=1` to make a missing one.
func withSQLiteFile(
    migratedUpTo version: String, _ setUp: @escaping @Sendable (Database) throws -> Void, _ body: (String) async throws -> Void,
    test: String = #function
) async throws {
    let fixture = catalogFixture(test, extension: "sqlite")
    if !FileManager.default.fileExists(atPath: fixture.path) {
        try requireFixtureMaking(fixture)
        let old = try DatabaseQueue(path: fixture.path, configuration: SQLiteDatabase.makeConfiguration())
        try SQLiteDatabase.migrator.migrate(old, upTo: version)
        try await old.write(setUp)
        try await old.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        try old.close()
    }
    try await withTemporaryDirectory { folder in
        let file = folder.appendingPathComponent("catalog.sqlite")
        try FileManager.default.copyItem(at: fixture, to: file)
        try await body(file.path)
    }
}

/// The file of the old catalog of `test` under `fixtures/catalogs/`.
private func catalogFixture(_ test: String, extension: String) -> URL {
    let name = test.prefix { $0 != "(" }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures/catalogs/\(name).\(`extension`)")
}

/// Throws unless fixtures may be made (`SPOTSTORE_MAKE_CATALOG_FIXTURES=1`).
private func requireFixtureMaking(_ fixture: URL) throws {
    guard ProcessInfo.processInfo.environment["SPOTSTORE_MAKE_CATALOG_FIXTURES"] == "1" else {
        throw SpotError(.internal, "the old catalog \(fixture.path) is missing: restore it from git, or make it with SPOTSTORE_MAKE_CATALOG_FIXTURES=1")
    }
    try FileManager.default.createDirectory(at: fixture.deletingLastPathComponent(), withIntermediateDirectories: true)
}

/// Runs `body` with a catalog connected to a new database as PostgreSQL migration
/// `version` left it, holding the rows the SQL `statements` wrote then, and the name of the
/// database; drops the database afterwards. The database is made from a real dump,
/// `fixtures/catalogs/<test>.sql`, named by the calling test and made once by the shipped
/// migrations (as `withSQLiteFile` makes its files).
func withPostgresDatabase(
    migratedUpTo version: Int, rows statements: [String], _ body: (PostgresCatalog, String) async throws -> Void,
    test: String = #function
) async throws {
    let fixture = catalogFixture(test, extension: "sql")
    let separator = "\n-- next statement\n"
    if !FileManager.default.fileExists(atPath: fixture.path) {
        try requireFixtureMaking(fixture)
        let migrations = PostgresDatabase.migrations.filter { $0.version <= version }
        let schema = ["CREATE TABLE migrations (version bigint PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"]
            + migrations.flatMap(\.statements) + migrations.map { "INSERT INTO migrations (version) VALUES (\($0.version))" }
        try Data((schema + statements).joined(separator: separator).utf8).write(to: fixture)
    }
    let dump = try String(contentsOf: fixture, encoding: .utf8).components(separatedBy: separator)
    let scratch = PostgresTestServer.Scratch()
    do {
        _ = try await scratch.catalog(onNewDatabase: true)
        let database = try #require(scratch.databases.last)
        try await PostgresTestServer.withAdminConnection(database: database) { connection in
            for statement in ["DROP SCHEMA public CASCADE", "CREATE SCHEMA public"] + dump {
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

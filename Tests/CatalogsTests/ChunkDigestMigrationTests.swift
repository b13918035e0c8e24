@testable import Catalogs
import Foundation
@testable import PostgresCatalog
import SpotCore
import Testing
import TestSupport

/// Catalogs made when every upload chunk was a blob (SQLite v9, PostgreSQL v5): the session
/// they hold keeps its chunk and blob, and takes chunks kept in its file (no digest) now.
@Suite struct ChunkDigestMigrationTests {
    static let blob = Digest(bytes: [UInt8](repeating: 0xab, count: 32))

    /// Session `s1` holds a 10-byte chunk stored as blob `blob`.
    static func checkMigrated(_ catalog: any Catalog) async throws {
        let old = UploadChunk(offset: 0, size: 10, digest: blob)
        #expect(try await catalog.uploadSession("s1")?.chunks == [old])
        let expiry = Date(timeIntervalSince1970: 4_000_000_000)
        let now = Date(timeIntervalSince1970: 3_900_000_000)
        let added = try await catalog.appendChunk(UploadChunk(offset: 10, size: 5, digest: nil), to: "s1", lease: nil, now: now, expiresAt: expiry)
        #expect(added.chunks == [old, UploadChunk(offset: 10, size: 5, digest: nil)])
        #expect(try await catalog.blobReferences().uploadChunks == [blob], "the old chunk's blob is still kept")
    }

    @Test func aVersion9SQLiteFileTakesChunksWithoutBlobs() async throws {
        try await withSQLiteFile(migratedUpTo: "v9") { db in
            try db.execute(sql: sqliteUploadSessionRow(declaring: "NULL"))
            try db.execute(sql: "INSERT INTO uploadChunks (sessionId, offset, size, digest) VALUES ('s1', 0, 10, '\(Self.blob.hex)')")
        } _: { file in
            try await Self.checkMigrated(try SQLiteCatalog(path: file))
        }
    }

    @Test(.enabled(if: PostgresTestServer.isEnabled))
    func aVersion5PostgreSQLDatabaseTakesChunksWithoutBlobs() async throws {
        try await withPostgresDatabase(migratedUpTo: 5, rows: [
            postgresUploadSessionRow(declaring: "NULL"),
            "INSERT INTO upload_chunks (session_id, \"offset\", size, digest) VALUES ('s1', 0, 10, '\(Self.blob.hex)')",
        ]) { catalog, _ in
            try await Self.checkMigrated(catalog)
        }
    }
}

@testable import Catalogs
import Foundation
import GRDB
import SpotCore
import Testing
import TestSupport

/// Catalogs made before WebP thumbnails (thumbnails keyed by blob and size alone) keep
/// their thumbnails when migrated, and then take a WebP one of each size besides.
@Suite struct ThumbnailMigrationTests {
    static let jpeg = thumbnail(256, seed: 11)
    static var webP: Thumbnail {
        var webP = thumbnail(256, seed: 12)
        webP.contentType = Thumbnail.webPContentType
        return webP
    }

    /// What a migrated catalog must show: the old thumbnail, then both.
    static func checkMigrated(_ catalog: any Catalog) async throws {
        #expect(try await catalog.photoDetails(of: digest(1))?.thumbnails == [jpeg])
        _ = try await catalog.commit(upload("b.jpg", seed: 1, photo: eiffelPhoto, thumbnails: [jpeg, webP]), admission: SpotAdmission())
        #expect(try await catalog.object(at: path("a.jpg"))?.thumbnails == [jpeg, webP])
        #expect(try await catalog.blobReferences().thumbnails.map(\.digest) == [digest(11), digest(12)])
    }

    @Test func aVersion5SQLiteFileKeepsItsThumbnails() async throws {
        try await withSQLiteFile(migratedUpTo: "v5") { db in
            try db.execute(sql: """
                INSERT INTO objects (bucket, name, digest, size, contentType, owner, createdAt, updatedAt)
                VALUES ('spots', 'a.jpg', ?, 1, 'image/jpeg', 'alice', '2024-01-01 00:00:00.000', '2024-01-01 00:00:00.000')
                """, arguments: [digest(1).hex])
            try db.execute(sql: "INSERT INTO photos (digest, width, height, orientation) VALUES (?, 4000, 3000, 1)", arguments: [digest(1).hex])
            try db.execute(sql: """
                INSERT INTO thumbnails (digest, size, thumbDigest, width, height, byteCount, contentType) VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [digest(1).hex, 256, Self.jpeg.digest.hex, Self.jpeg.width, Self.jpeg.height, Self.jpeg.byteCount, Self.jpeg.contentType])
        } _: { file in
            let catalog = try SQLiteCatalog(path: file)
            try await Self.checkMigrated(catalog)
            let indexes = try catalog.database.readNow { db in try db.indexes(on: "thumbnails").map(\.columns) }
            #expect(indexes.contains(["thumb_digest"]), "gc's lookup by thumbnail digest stays indexed")
        }
    }

    /// A database as version 1 left it, with a thumbnail as version 1 stored it.
    @Test(.enabled(if: PostgresTestServer.isEnabled))
    func aVersion1PostgreSQLDatabaseKeepsItsThumbnails() async throws {
        try await withPostgresDatabase(migratedUpTo: 1, rows: [
            """
            INSERT INTO objects (bucket, name, digest, size, content_type, owner, created_at, updated_at)
            VALUES ('spots', 'a.jpg', '\(digest(1).hex)', 1, 'image/jpeg', 'alice', now(), now())
            """,
            "INSERT INTO photos (digest, width, height, orientation) VALUES ('\(digest(1).hex)', 4000, 3000, 1)",
            """
            INSERT INTO thumbnails (digest, size, thumb_digest, width, height, byte_count, content_type)
            VALUES ('\(digest(1).hex)', 256, '\(Self.jpeg.digest.hex)', \(Self.jpeg.width), \(Self.jpeg.height), \(Self.jpeg.byteCount), 'image/jpeg')
            """,
        ]) { catalog, _ in
            try await Self.checkMigrated(catalog)
        }
    }
}

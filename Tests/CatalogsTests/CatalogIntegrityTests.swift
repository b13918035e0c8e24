@testable import Catalogs
import SQLCatalog
import Foundation
import GRDB
import SpotCore
import Testing

/// The integrity part of the `Catalog` port: references, damage marks, issues and statistics.
@Suite struct CatalogIntegrityTests {
    let thumb256 = Thumbnail(size: 256, digest: digest(901), width: 256, height: 192, byteCount: 3000, contentType: "image/jpeg")

    @Test(arguments: CatalogBackend.allCases)
    func referencesListEveryBlobInUse(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.commit(try upload("eiffel/a.jpg", seed: 1, photo: eiffelPhoto, thumbnails: [thumb256]), admission: SpotAdmission())
            _ = try await catalog.commit(try upload("alice/a.jpg", in: "users", seed: 1), admission: SpotAdmission())
            _ = try await catalog.commit(try upload("alice/b.txt", in: "media", seed: 2), admission: SpotAdmission())
            try await catalog.setLocationFreeDigest(digest(902), of: digest(1), lease: try await lease(digest(902), in: catalog))
            let references = try await catalog.blobReferences()
            #expect(references.objects.map(\.path) == ["media/alice/b.txt", "spots/eiffel/a.jpg", "users/alice/a.jpg"])
            #expect(references.objects.map(\.size) == [1002, 1001, 1001])
            #expect(references.thumbnails == [.init(original: digest(1), edge: 256, digest: digest(901), byteCount: 3000)])
            #expect(references.locationFree == [.init(original: digest(1), digest: digest(902))])
            #expect(references.referenced == [digest(1), digest(2), digest(901), digest(902)])
            #expect(references.damaged.isEmpty)

            // A deleted object's blob is no longer referenced; its thumbnails stay recorded.
            _ = try await catalog.removeObject(at: try path("eiffel/a.jpg"))
            _ = try await catalog.removeObject(at: try path("alice/a.jpg", in: "users"))
            #expect(try await catalog.blobReferences().referenced == [digest(2), digest(901), digest(902)])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func damageMarksAreSetReadAndCleared(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            #expect(try await catalog.damage(of: digest(1)) == nil)
            try await catalog.markDamaged(digest(1), reason: "is missing")
            try await catalog.markDamaged(digest(1), reason: "failed its checksum")
            #expect(try await catalog.damage(of: digest(1)) == "failed its checksum", "marking again replaces the reason")
            #expect(try await catalog.blobReferences().damaged == [digest(1): "failed its checksum"])
            #expect(try await catalog.clearDamage(of: digest(1)))
            #expect(try await !catalog.clearDamage(of: digest(1)))
            #expect(try await catalog.damage(of: digest(1)) == nil)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func statisticsCountLogicalAndUniqueBytes(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            #expect(try await catalog.statistics() == CatalogStatistics(objects: 0, logicalBytes: 0, uniqueOriginals: 0, uniqueOriginalBytes: 0, thumbnails: 0, thumbnailBytes: 0, buckets: []))
            _ = try await catalog.commit(try upload("eiffel/a.jpg", seed: 1, thumbnails: [thumb256]), admission: SpotAdmission())
            _ = try await catalog.commit(try upload("eiffel/b.jpg", seed: 1, thumbnails: [thumb256]), admission: SpotAdmission())
            _ = try await catalog.commit(try upload("alice/b.txt", in: "media", seed: 2), admission: SpotAdmission())
            let stats = try await catalog.statistics()
            #expect(stats.objects == 3)
            #expect(stats.logicalBytes == 1001 + 1001 + 1002)
            #expect(stats.uniqueOriginals == 2 && stats.uniqueOriginalBytes == 1001 + 1002)
            #expect(stats.thumbnails == 1 && stats.thumbnailBytes == 3000)
            #expect(stats.buckets == [.init(name: "media", objects: 1, bytes: 1002), .init(name: "spots", objects: 2, bytes: 2002)])
        }
    }

    @Test func issuesInTheFileAreFoundAndRepaired() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("catalog.sqlite").path
            let catalog = try SQLiteCatalog(path: file)
            _ = try await catalog.commit(try upload("eiffel/a.jpg", seed: 1, photo: eiffelPhoto), admission: SpotAdmission())
            _ = try await catalog.commit(try upload("louvre/b.jpg", seed: 2), admission: SpotAdmission())
            #expect(try await catalog.referenceIssues().isEmpty)
            #expect(try await catalog.repairIssues() == 0)

            // Damage the file behind the catalog's back, as a crash or a hand edit could.
            let queue = try DatabaseQueue(path: file)
            try await queue.write { db in
                try db.execute(sql: "UPDATE spots SET latitude = NULL, longitude = NULL WHERE id = 'eiffel'")
                try db.execute(sql: "DELETE FROM spots WHERE id = 'louvre'")
                try db.execute(sql: "UPDATE spots SET object_count = 7 WHERE id = 'eiffel'")
                try db.execute(sql: "UPDATE objects SET latitude = NULL WHERE name = 'eiffel/a.jpg'")
            }
            let issues = try await catalog.referenceIssues()
            #expect(issues.count == 4, "\(issues)")
            #expect(issues.first?.problem == "1 object records a position that is not its photo's (derived state out of date)")
            #expect(issues.contains { $0.problem == "spot spots/eiffel records 7 objects but holds 1 (derived state out of date)" })
            #expect(issues.contains { $0.problem.contains("spots/louvre has objects but no spot row") && $0.repairable })
            #expect(issues.contains { $0.problem.contains("spots/eiffel") && $0.problem.contains("derived state") && $0.repairable })
            #expect(try await catalog.repairIssues() == 4)
            #expect(try await catalog.referenceIssues().isEmpty)
            let eiffel = try #require(try await catalog.spotDetails(bucket: "spots", id: "eiffel"))
            #expect(eiffel.location?.latitude == 48.8584)
            #expect(eiffel.objectCount == 1)
            #expect(try await catalog.spot(bucket: "spots", id: "louvre")?.owner == "alice")
            #expect(try await catalog.spot(bucket: "spots", id: "louvre")?.objectCount == 1)
        }
    }

    /// The scan for issues reads spots a page at a time: drift in the first spot, at the
    /// end of a page and past it is found, and repaired, among 1,002 spots.
    @Test func issuesInEveryPageOfSpotsAreFoundAndRepaired() async throws {
        let queue = try DatabaseQueue(configuration: SQLiteDatabase.makeConfiguration())
        let catalog = SQLiteCatalog(try SQLiteDatabase(queue))
        let names = (0..<1002).map { String(format: "s%04d", $0) }
        for (index, name) in names.enumerated() {
            _ = try await catalog.commit(try SQLiteCatalogSpotTests.uniqueUpload("\(name)/a.txt", seed: index), admission: SpotAdmission())
        }
        let drifted = ["s0000", "s0999", "s1000", "s1001"]
        try await queue.write { db in
            for name in drifted { try db.execute(sql: "UPDATE spots SET object_count = 5 WHERE id = ?", arguments: [name]) }
        }
        let issues = try await catalog.referenceIssues()
        #expect(issues.map(\.problem) == drifted.map { "spot spots/\($0) records 5 objects but holds 1 (derived state out of date)" })
        #expect(try await catalog.repairIssues() == drifted.count)
        #expect(try await catalog.referenceIssues().isEmpty)
    }

    @Test func migrationV4AddsTheDamagedBlobsTable() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("catalog.sqlite").path
            _ = try SQLiteCatalog(path: file)
            let queue = try DatabaseQueue(path: file)
            let applied = try await queue.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid") }
            #expect(applied.prefix(4) == ["v1", "v2", "v3", "v4"], "\(applied)")
            let columns = try await queue.read { db in try db.columns(in: "damaged_blobs").map(\.name) }
            #expect(columns == ["digest", "reason", "marked_at"])
        }
    }
}

import Catalogs
import SQLCatalog
import Conformance
import Foundation
import GRDB
import SpotCore
import Testing

/// What only a catalog file can show: WAL mode, persistence, and several "processes"
/// (independent connection pools) sharing one file.
@Suite struct SQLiteCatalogFileTests {
    @Test func theFileIsCreatedAndInWALMode() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("catalog.sqlite").path
            #expect(!FileManager.default.fileExists(atPath: file))
            let catalog = try SQLiteCatalog(path: file)
            _ = try await catalog.addUser("alice", tokenDigest: digest(1))
            // Bytes 18 and 19 of the header are the file format versions: 2 means WAL.
            let header = try #require(FileHandle(forReadingAtPath: file)).readData(ofLength: 20)
            #expect(Array(header.prefix(16)) == Array("SQLite format 3\0".utf8))
            #expect(Array(header.suffix(2)) == [2, 2])
        }
    }

    /// Every commit syncs the WAL (synchronous=FULL, not GRDB's NORMAL), so an
    /// acknowledged write survives a power cut, not only a crash of the process.
    @Test func theWriterSyncsTheWALAtEveryCommit() async throws {
        try await withTemporaryDirectory { folder in
            let database = try SQLiteDatabase(path: folder.appendingPathComponent("catalog.sqlite").path)
            let rows: [SQLRow] = try await database.write { transaction in try await transaction.rows("PRAGMA synchronous") }
            let row = try #require(rows.first)
            let level: Int = try row(0)
            #expect(level == 2)
        }
    }

    /// A write that waits past the busy timeout for a lock another process holds is
    /// unavailable (503 with Retry-After), never an internal error, and writes nothing.
    @Test func aWriteLockHeldElsewhereMakesWritesUnavailable() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("catalog.sqlite").path
            let catalog = SQLiteCatalog(try SQLiteDatabase(path: file, busyTimeout: 0.2))
            var configuration = Configuration()
            configuration.allowsUnsafeTransactions = true
            let holder = try DatabaseQueue(path: file, configuration: configuration)
            try await holder.writeWithoutTransaction { db in try db.execute(sql: "BEGIN IMMEDIATE") }
            let error = await #expect(throws: SpotError.self) { try await catalog.addUser("alice", tokenDigest: digest(1)) }
            #expect(error?.kind == .unavailable)
            #expect(error?.message == "the catalog is busy: another connection or process holds its write lock; retry shortly")
            try await holder.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") }
            #expect(try await catalog.user(uid: "alice") == nil)
            #expect(try await catalog.addUser("alice", tokenDigest: digest(1)).uid == "alice")
        }
    }

    @Test func aFileInAMissingFolderIsRefused() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("missing/catalog.sqlite").path
            #expect(throws: (any Error).self) { try SQLiteCatalog(path: file) }
        }
    }

    @Test func aReopenedFileKeepsEverything() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("catalog.sqlite").path
            let stored: StoredObject
            let spot: SpotDetails
            do {
                let catalog = try SQLiteCatalog(path: file)
                _ = try await catalog.addUser("alice", tokenDigest: digest(1))
                stored = try await catalog.commit(
                    upload("eiffel/1.jpg", photo: eiffelPhoto, thumbnails: [thumbnail(256, seed: 2)]), admission: SpotAdmission(maxObjects: 4))
                spot = try await catalog.updateSpot(
                    bucket: "spots", id: "eiffel", changes: SpotChanges(name: "Tower", description: "Iron", city: "Lutetia"))
            }
            let reopened = try SQLiteCatalog(path: file)
            #expect(try await reopened.user(tokenDigest: digest(1))?.uid == "alice")
            #expect(try await reopened.object(at: stored.path) == stored)
            #expect(try await reopened.spot(bucket: "spots", id: "eiffel")?.objectCount == 1)
            #expect(spot.location == eiffelPhoto.location)
            #expect(try await reopened.spotDetails(bucket: "spots", id: "eiffel") == spot)
            #expect(try await reopened.findSpots(SpotQuery(bucket: "spots", criterion: .city("lutetia"))).spots == [spot])
        }
    }

    @Test func twoCatalogsOnOneFileShareUsersAndLimits() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("catalog.sqlite").path
            let first = try SQLiteCatalog(path: file)
            let second = try SQLiteCatalog(path: file)

            _ = try await first.addUser("alice", tokenDigest: digest(1))
            #expect(try await second.user(tokenDigest: digest(1))?.uid == "alice")
            let duplicate = await #expect(throws: SpotError.self) {
                try await second.addUser("alice", tokenDigest: digest(2))
            }
            #expect(duplicate?.kind == .conflict)
            #expect(duplicate?.message == "user 'alice' already exists")

            for index in 1...4 {
                let catalog = index.isMultiple(of: 2) ? second : first
                _ = try await catalog.commit(upload("eiffel/\(index).jpg", seed: index), admission: SpotAdmission(maxObjects: 4))
            }
            for catalog in [first, second] {
                let error = await #expect(throws: SpotError.self) {
                    try await catalog.commit(upload("eiffel/5.jpg", seed: 5), admission: SpotAdmission(maxObjects: 4))
                }
                #expect(error?.kind == .conflict)
                #expect(error?.message.contains("the limit is 4") == true)
                #expect(try await catalog.spot(bucket: "spots", id: "eiffel")?.objectCount == 4)
            }
        }
    }
}

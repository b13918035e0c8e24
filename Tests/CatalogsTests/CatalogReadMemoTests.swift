import Catalogs
import SQLCatalog
import Foundation
import GRDB
import SpotCore
import Testing

/// A file catalog keeps the answers of the reads every download makes (a token's user, an
/// object for reading) until any connection commits: a second catalog on the same file
/// plays the operator's command-line tool next to a running server.
@Suite struct CatalogReadMemoTests {
    @Test func keptAnswersFollowEveryCommitOfAnotherCatalog() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("catalog.sqlite").path
            let server = try SQLiteCatalog(path: file)
            let tool = try SQLiteCatalog(path: file)

            #expect(try await server.user(tokenDigest: digest(1)) == nil)
            _ = try await tool.addUser("alice", tokenDigest: digest(1))
            for _ in 1...2 { #expect(try await server.user(tokenDigest: digest(1))?.uid == "alice") }
            #expect(try await tool.revokeTokens(of: "alice"))
            #expect(try await server.user(tokenDigest: digest(1)) == nil)

            let path = try ObjectPath(bucket: "spots", name: "eiffel/1.jpg")
            #expect(try await server.objectForReading(at: path).object == nil)
            let stored = try await tool.commit(upload("eiffel/1.jpg", seed: 1), admission: SpotAdmission(maxObjects: 4))
            for _ in 1...2 {
                let reading = try await server.objectForReading(at: path)
                #expect(reading.object == stored)
                #expect(reading.spot?.objectCount == 1)
                #expect(reading.damage.isEmpty)
            }
            try await tool.markDamaged(stored.digest, reason: "the bytes do not match")
            #expect(try await server.objectForReading(at: path).damage[stored.digest] == "the bytes do not match")
            _ = try await tool.removeObject(at: path)
            #expect(try await server.objectForReading(at: path).object == nil)
        }
    }

    @Test func keptAnswersFollowTheCatalogsOwnCommits() async throws {
        try await withTemporaryDirectory { folder in
            let catalog = try SQLiteCatalog(path: folder.appendingPathComponent("catalog.sqlite").path)
            let path = try ObjectPath(bucket: "spots", name: "eiffel/1.jpg")
            let first = try await catalog.commit(upload("eiffel/1.jpg", seed: 1), admission: SpotAdmission(maxObjects: 4))
            #expect(try await catalog.objectForReading(at: path).object == first)
            let second = try await catalog.commit(upload("eiffel/1.jpg", seed: 2), admission: SpotAdmission(maxObjects: 4))
            #expect(try await catalog.objectForReading(at: path).object?.digest == second.digest)
        }
    }

    /// The probe must not hold a read transaction: one left open would stop every
    /// checkpoint, and the WAL file would grow for as long as the server runs.
    @Test func theChangeProbeLeavesCheckpointsFree() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("catalog.sqlite").path
            let catalog = try SQLiteCatalog(path: file)
            _ = try await catalog.addUser("alice", tokenDigest: digest(1))
            #expect(try await catalog.user(tokenDigest: digest(1))?.uid == "alice")
            let other = try DatabaseQueue(path: file)
            let (walFrames, checkpointed) = try await other.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
            #expect(walFrames == checkpointed)
            let walSize = try FileManager.default.attributesOfItem(atPath: file + "-wal")[.size] as? Int
            #expect(walSize == 0)
        }
    }

    /// The stamp is read from SQLite's WAL index (negative numbers; `PRAGMA data_version`
    /// would give positive ones) and is new after every commit of any connection.
    @Test func theCommitStampChangesWithEveryCommitAndOnlyThen() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("catalog.sqlite").path
            let server = try SQLiteCatalog(path: file)
            let tool = try SQLiteCatalog(path: file)
            var seen: Set<Int64> = []
            var stamp = try #require(try server.changes.stamp())
            #expect(stamp < 0, "read from the WAL index")
            for round in 1...100 {
                let writer = round.isMultiple(of: 2) ? server : tool
                _ = try await writer.addUser("user\(round)", tokenDigest: digest(1000 + round))
                let next = try #require(try server.changes.stamp())
                #expect(next < 0 && next != stamp && !seen.contains(next), "commit \(round)")
                seen.insert(stamp)
                stamp = next
                #expect(try server.changes.stamp() == stamp, "no commit, no change")
                _ = try await tool.users()  // reads change nothing
                #expect(try server.changes.stamp() == stamp)
            }
            #expect(try SQLiteCatalog.inMemory().changes.stamp() == nil)
        }
    }
}

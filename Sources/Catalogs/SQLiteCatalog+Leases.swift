import Foundation
import GRDB
import CatalogPlanning
import SpotCore

extension SQLiteCatalog {
    /// Leases on blobs stored before the catalog names them, removal claims of gc, and
    /// settings every instance shares (the URL-signing key).
    ///
    /// Shipped: never change this.
    static func addLeasesV5(_ db: Database) throws {
        try db.create(table: "leases") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("expiresAt", .datetime).notNull()
        }
        try db.create(table: "leasedBlobs") { t in
            t.column("leaseId", .integer).notNull().references("leases", onDelete: .cascade)
            t.column("digest", .text).notNull().indexed()
        }
        try db.create(index: "leasedBlobs_on_leaseId", on: "leasedBlobs", columns: ["leaseId"])
        try db.create(table: "blobRemovals") { t in
            t.primaryKey("digest", .text)
            t.column("claimedAt", .datetime).notNull()
        }
        try db.create(table: "settings") { t in
            t.primaryKey("name", .text)
            t.column("value", .blob).notNull()
        }
    }

    public func lease(_ digests: [Digest], at now: Date, for duration: TimeInterval) async throws -> LeaseID? {
        let hexes = Array(Set(digests.map(\.hex)))
        return try await write { db in
            let claimed = try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM blobRemovals WHERE claimedAt > ? AND digest IN (\(hexes.map { _ in "?" }.joined(separator: ",")))
                """, arguments: StatementArguments([now.addingTimeInterval(-claimLifetime)] + hexes)) ?? 0
            guard claimed == 0 else { return nil }
            try db.execute(sql: "INSERT INTO leases (expiresAt) VALUES (?)", arguments: [now.addingTimeInterval(duration)])
            let id = db.lastInsertedRowID
            for hex in hexes {
                try db.execute(sql: "INSERT INTO leasedBlobs (leaseId, digest) VALUES (?, ?)", arguments: [id, hex])
            }
            return LeaseID(id)
        }
    }

    public func releaseLease(_ id: LeaseID) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM leases WHERE id = ?", arguments: [id.rawValue]) }
    }

    public func claimForRemoval(_ digest: Digest, cutoff: Date, now: Date) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM leases WHERE expiresAt < ?", arguments: [cutoff])
            let hex = digest.hex
            let named = try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM objects WHERE digest = ?1) OR EXISTS (SELECT 1 FROM thumbnails WHERE thumbDigest = ?1)
                    OR EXISTS (SELECT 1 FROM locationFreeBlobs WHERE freeDigest = ?1) OR EXISTS (SELECT 1 FROM leasedBlobs WHERE digest = ?1)
                    OR EXISTS (SELECT 1 FROM uploadChunks WHERE digest = ?1)
                """, arguments: [hex]) ?? true
            guard !named else { return false }
            try db.execute(sql: "INSERT OR REPLACE INTO blobRemovals (digest, claimedAt) VALUES (?, ?)", arguments: [hex, now])
            return true
        }
    }

    public func endRemoval(_ digest: Digest) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM blobRemovals WHERE digest = ?", arguments: [digest.hex]) }
    }

    public func signingKey(orStore candidate: [UInt8]) async throws -> [UInt8] {
        try await write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO settings (name, value) VALUES ('signingKey', ?)", arguments: [Data(candidate)])
            guard let key = try Data.fetchOne(db, sql: "SELECT value FROM settings WHERE name = 'signingKey'") else {
                throw SpotError(.internal, "the catalog lost its signing key while storing it")
            }
            return [UInt8](key)
        }
    }

    /// Throws `.unavailable` unless lease `id` is still held, then releases it: a lease gc
    /// dropped (it expired) may no longer protect its blobs.
    static func release(heldLease id: LeaseID, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM leases WHERE id = ?", arguments: [id.rawValue])
        guard db.changesCount == 1 else {
            throw SpotError(.unavailable, "the upload took longer than its lease on the stored bytes, so gc may have removed them; send it again")
        }
    }
}

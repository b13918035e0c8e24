import Foundation
import GRDB
import CatalogPlanning
import SpotCore

extension SQLiteCatalog {
    /// Records a download token (its SHA-256 `digest`) for the object at `path`; `nil`
    /// when there is no object there.
    /// - Throws: `SpotError(.conflict)` when a token with this digest exists already.
    public func addDownloadToken(_ digest: Digest, to path: ObjectPath) async throws -> DownloadToken? {
        try await write { db in
            guard let objectId = try ObjectRecord.fetchOne(db, key: ObjectRecord.key(path))?.id else { return nil }
            try Self.insertDownloadToken(digest, of: objectId, at: Date(), db)
            // Read back, so the date is exactly what later reads will see.
            return try DownloadTokenRecord.fetchOne(db, key: digest.hex)?.token
        }
    }

    /// Records download token `digest` of object row `objectId`.
    /// - Throws: `SpotError(.conflict)` when a token with this digest exists already.
    static func insertDownloadToken(_ digest: Digest, of objectId: Int64, at now: Date, _ db: Database) throws {
        do {
            try DownloadTokenRecord(digest: digest.hex, objectId: objectId, createdAt: now).insert(db)
        } catch let error as DatabaseError where error.isUniqueViolation {
            throw SpotError(.conflict, "that download token is already in use")
        }
    }

    /// The live download tokens of the object at `path`, oldest first; `nil` when there is no object.
    public func downloadTokens(of path: ObjectPath) async throws -> [DownloadToken]? {
        try readNow { db in
            guard let objectId = try ObjectRecord.fetchOne(db, key: ObjectRecord.key(path))?.id else { return nil }
            return try Self.downloadTokenRecords(of: objectId, db).map(\.token)
        }
    }

    /// Revokes the download token `id` of the object at `path`; `false` when there is no such token.
    public func revokeDownloadToken(_ id: String, of path: ObjectPath) async throws -> Bool {
        try await write { db in
            guard let objectId = try ObjectRecord.fetchOne(db, key: ObjectRecord.key(path))?.id,
                  let record = try Self.downloadTokenRecords(of: objectId, db).first(where: { $0.token.id == id })
            else { return false }
            return try record.delete(db)
        }
    }

    /// Replaces the download tokens of every object `uid` owns with the one `token` gives
    /// for the user's next epoch; `nil` when there is no such user.
    public func replaceDownloadTokens(ownedBy uid: String, with token: @escaping @Sendable (ObjectPath, Int64, Int) -> Digest) async throws -> Int? {
        try await write { db in
            try db.execute(sql: "UPDATE users SET downloadTokenEpoch = downloadTokenEpoch + 1 WHERE uid = ?", arguments: [uid])
            guard let epoch = try Int.fetchOne(db, sql: "SELECT downloadTokenEpoch FROM users WHERE uid = ?", arguments: [uid]) else { return nil }
            try db.execute(sql: "DELETE FROM downloadTokens WHERE objectId IN (SELECT id FROM objects WHERE owner = ?)", arguments: [uid])
            let now = Date()
            let objects = try Row.fetchCursor(db, sql: "SELECT id, bucket, name, generation FROM objects WHERE owner = ?", arguments: [uid])
            var count = 0
            while let row = try objects.next() {
                let path = try storedPath(bucket: row["bucket"], name: row["name"])
                try Self.insertDownloadToken(token(path, row["generation"], epoch), of: row["id"], at: now, db)
                count += 1
            }
            return count
        }
    }

    /// The object at `path` if one of its live download tokens has this digest. The
    /// object's token digests are each compared in constant time; the lookup is by path,
    /// never by the secret.
    public func object(at path: ObjectPath, downloadTokenDigest: Digest) async throws -> StoredObject? {
        try readNow { db in
            guard let record = try ObjectRecord.fetchOne(db, key: ObjectRecord.key(path)), let objectId = record.id else { return nil }
            var found = false
            for token in try Self.downloadTokenRecords(of: objectId, db) {
                if let stored = Digest(hex: token.digest), stored.equalsInConstantTime(downloadTokenDigest) { found = true }
            }
            return found ? try Self.storedObjects([record], db).first : nil
        }
    }

    /// The blob holding the same image as `digest` with its GPS removed, if made before.
    public func locationFreeDigest(of digest: Digest) async throws -> Digest? {
        try readNow { db in
            try String.fetchOne(db, sql: "SELECT freeDigest FROM locationFreeBlobs WHERE digest = ?", arguments: [digest.hex])
                .flatMap(Digest.init(hex:))
        }
    }

    /// Records that blob `free` is `digest` without GPS (replacing an earlier record) and releases `lease`.
    public func setLocationFreeDigest(_ free: Digest, of digest: Digest, lease: LeaseID) async throws {
        try await write { db in
            try Self.release(heldLease: lease, db)
            try db.execute(
                sql: "INSERT OR REPLACE INTO locationFreeBlobs (digest, freeDigest) VALUES (?, ?)", arguments: [digest.hex, free.hex])
        }
    }

    private static func downloadTokenRecords(of objectId: Int64, _ db: Database) throws -> [DownloadTokenRecord] {
        try DownloadTokenRecord.filter(Column("objectId") == objectId).order(Column.rowID).fetchAll(db)
    }
}

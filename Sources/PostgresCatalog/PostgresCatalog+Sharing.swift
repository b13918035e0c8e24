import CatalogPlanning
import Foundation
import PostgresNIO
import SpotCore

extension PostgresCatalog {
    /// Records a download token (its SHA-256 `digest`) for the object at `path`; `nil`
    /// when there is no object there.
    /// - Throws: `SpotError(.conflict)` when a token with this digest exists already.
    public func addDownloadToken(_ digest: Digest, to path: ObjectPath) async throws -> DownloadToken? {
        try await write { connection in
            guard let objectId = try await Self.objectId(at: path, connection, logger: self.logger) else { return nil }
            return try await Self.insertDownloadToken(digest, of: objectId, at: Date(), connection, logger: self.logger)
        }
    }

    /// Records download token `digest` of object row `objectId` and returns it as stored.
    /// - Throws: `SpotError(.conflict)` when a token with this digest exists already.
    static func insertDownloadToken(
        _ digest: Digest, of objectId: Int64, at now: Date, _ connection: PostgresConnection, logger: Logger
    ) async throws -> DownloadToken {
        let inserted = try await connection.query("""
            INSERT INTO download_tokens (digest, object_id, created_at) VALUES (\(digest.hex), \(objectId), \(now))
            ON CONFLICT (digest) DO NOTHING
            RETURNING digest, created_at
            """, logger: logger).collect()
        guard let row = inserted.first else { throw SpotError(.conflict, "that download token is already in use") }
        return try downloadToken(row)
    }

    /// The live download tokens of the object at `path`, oldest first; `nil` when there is no object.
    public func downloadTokens(of path: ObjectPath) async throws -> [DownloadToken]? {
        try await read { connection in
            guard let objectId = try await Self.objectId(at: path, connection, logger: self.logger) else { return nil }
            return try await Self.downloadTokenRows(of: objectId, connection, logger: self.logger).map(Self.downloadToken)
        }
    }

    /// Revokes the download token `id` (the first 16 hex digits of its digest) of the
    /// object at `path`; `false` when there is no such token.
    public func revokeDownloadToken(_ id: String, of path: ObjectPath) async throws -> Bool {
        try await write { connection in
            guard let objectId = try await Self.objectId(at: path, connection, logger: self.logger) else { return false }
            let tokens = try await Self.downloadTokenRows(of: objectId, connection, logger: self.logger)
            guard let row = try tokens.first(where: { try Self.downloadToken($0).id == id }) else { return false }
            let digest = try row.decode(String.self, at: 0)
            try await connection.query("DELETE FROM download_tokens WHERE digest = \(digest)", logger: self.logger)
            return true
        }
    }

    /// Replaces the download tokens of every object `uid` owns with the one `token` gives
    /// for the user's next epoch; `nil` when there is no such user.
    public func replaceDownloadTokens(ownedBy uid: String, with token: @escaping @Sendable (ObjectPath, Int64, Int) -> Digest) async throws -> Int? {
        try await write { connection in
            guard let epoch = try await connection.query(
                "UPDATE users SET download_token_epoch = download_token_epoch + 1 WHERE uid = \(uid) RETURNING download_token_epoch",
                logger: self.logger
            ).collect().first?.decode(Int.self, at: 0) else { return nil }
            try await connection.query(
                "DELETE FROM download_tokens WHERE object_id IN (SELECT id FROM objects WHERE owner = \(uid))", logger: self.logger)
            let now = Date()
            let objects = try await connection.query(
                "SELECT id, bucket, name, generation FROM objects WHERE owner = \(uid)", logger: self.logger
            ).collect()
            for row in objects {
                let (id, bucket, name, generation) = try row.decode((Int64, String, String, Int64).self)
                _ = try await Self.insertDownloadToken(
                    token(try storedPath(bucket: bucket, name: name), generation, epoch), of: id, at: now, connection, logger: self.logger)
            }
            return objects.count
        }
    }

    /// The object at `path` if one of its live download tokens has this digest. The
    /// object's token digests are each compared in constant time; the lookup is by path,
    /// never by the secret.
    public func object(at path: ObjectPath, downloadTokenDigest: Digest) async throws -> StoredObject? {
        try await read { connection in
            guard let objectId = try await Self.objectId(at: path, connection, logger: self.logger) else { return nil }
            var found = false
            for row in try await Self.downloadTokenRows(of: objectId, connection, logger: self.logger) {
                if let stored = Digest(hex: try row.decode(String.self, at: 0)), stored.equalsInConstantTime(downloadTokenDigest) { found = true }
            }
            return found ? try await Self.fetchObject(at: path, connection, logger: self.logger) : nil
        }
    }

    /// The blob holding the same image as `digest` with its GPS removed, if made before.
    public func locationFreeDigest(of digest: Digest) async throws -> Digest? {
        try await query("SELECT free_digest FROM location_free_blobs WHERE digest = \(digest.hex)").first
            .flatMap { Digest(hex: try $0.decode(String.self, at: 0)) }
    }

    /// Records that blob `free` is `digest` without GPS (replacing an earlier record) and releases `lease`.
    public func setLocationFreeDigest(_ free: Digest, of digest: Digest, lease: LeaseID) async throws {
        try await write { connection in
            try await Self.release(heldLease: lease, connection, logger: self.logger)
            try await connection.query("""
                INSERT INTO location_free_blobs (digest, free_digest) VALUES (\(digest.hex), \(free.hex))
                ON CONFLICT (digest) DO UPDATE SET free_digest = EXCLUDED.free_digest
                """, logger: self.logger)
        }
    }

    /// The id of the object row at `path`, or `nil`.
    private static func objectId(at path: ObjectPath, _ connection: PostgresConnection, logger: Logger) async throws -> Int64? {
        try await connection.query("SELECT id FROM objects WHERE bucket = \(path.bucket) AND name = \(path.name)", logger: logger)
            .collect().first?.decode(Int64.self, at: 0)
    }

    /// The (digest, created_at) rows of the download tokens of object `objectId`, oldest first.
    private static func downloadTokenRows(of objectId: Int64, _ connection: PostgresConnection, logger: Logger) async throws -> [PostgresRow] {
        try await connection.query(
            "SELECT digest, created_at FROM download_tokens WHERE object_id = \(objectId) ORDER BY seq", logger: logger
        ).collect()
    }

    /// A download token from a (digest, created_at) row: its id is the digest's first 16 hex digits.
    private static func downloadToken(_ row: PostgresRow) throws -> DownloadToken {
        let (digest, createdAt) = try row.decode((String, Date).self)
        return DownloadToken(id: String(digest.prefix(16)), createdAt: createdAt)
    }
}

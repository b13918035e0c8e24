import Foundation
import SpotCore

extension SQLCatalog {
    /// A digest in use is a conflict.
    public func addDownloadToken(_ digest: Digest, to path: ObjectPath) async throws -> DownloadToken? {
        let now = clock()
        return try await write { transaction in
            guard let objectId = try await Self.objectId(at: path, transaction) else { return nil }
            return try await Self.insertDownloadToken(digest, of: objectId, at: now, transaction)
        }
    }

    /// Records download token `digest` of object row `objectId` and returns it as stored.
    /// - Throws: `SpotError(.conflict)` when a token with this digest exists already.
    static func insertDownloadToken(
        _ digest: Digest, of objectId: Int64, at now: Date, _ transaction: any CatalogTransaction
    ) async throws -> DownloadToken {
        guard let row = try await transaction.row("""
            INSERT INTO download_tokens (digest, object_id, created_at) VALUES (\(digest.hex), \(objectId), \(now))
            ON CONFLICT (digest) DO NOTHING
            RETURNING digest, created_at
            """)
        else { throw SpotError(.conflict, "that download token is already in use") }
        return try downloadToken(row)
    }

    public func downloadTokens(of path: ObjectPath) async throws -> [DownloadToken]? {
        try await read { transaction in
            guard let objectId = try await Self.objectId(at: path, transaction) else { return nil }
            return try await Self.downloadTokenRows(of: objectId, transaction).map(Self.downloadToken)
        }
    }

    /// A token's id is the first 16 hex digits of its digest.
    public func revokeDownloadToken(_ id: String, of path: ObjectPath) async throws -> Bool {
        try await write { transaction in
            guard let objectId = try await Self.objectId(at: path, transaction) else { return false }
            let tokens = try await Self.downloadTokenRows(of: objectId, transaction)
            guard let row = try tokens.first(where: { try Self.downloadToken($0).id == id }) else { return false }
            try await transaction.run("DELETE FROM download_tokens WHERE digest = \(try row(0) as String)")
            return true
        }
    }

    public func replaceDownloadTokens(ownedBy uid: String, with token: @escaping @Sendable (ObjectPath, Int64, Int) -> Digest) async throws -> Int? {
        let now = clock()
        return try await write { transaction in
            guard let epoch = try await transaction.value(
                "UPDATE users SET download_token_epoch = download_token_epoch + 1 WHERE uid = \(uid) RETURNING download_token_epoch",
                as: Int.self)
            else { return nil }
            try await transaction.run("DELETE FROM download_tokens WHERE object_id IN (SELECT id FROM objects WHERE owner = \(uid))")
            let objects = try await transaction.rows("SELECT id, bucket, name, generation FROM objects WHERE owner = \(uid)")
            for row in objects {
                let path = try storedPath(bucket: row(1), name: row(2))
                _ = try await Self.insertDownloadToken(token(path, try row(3), epoch), of: try row(0), at: now, transaction)
            }
            return objects.count
        }
    }

    /// The lookup is by path, never by the secret; each token digest of the object is
    /// compared in constant time.
    public func object(at path: ObjectPath, downloadTokenDigest: Digest) async throws -> StoredObject? {
        try await read { transaction in
            guard let objectId = try await Self.objectId(at: path, transaction) else { return nil }
            var found = false
            for row in try await Self.downloadTokenRows(of: objectId, transaction) {
                if let stored = Digest(hex: try row(0)), stored.equalsInConstantTime(downloadTokenDigest) { found = true }
            }
            return found ? try await Self.fetchObject(at: path, transaction) : nil
        }
    }

    /// One statement, no transaction.
    public func locationFreeDigest(of digest: Digest) async throws -> Digest? {
        try await database.query("SELECT free_digest FROM location_free_blobs WHERE digest = \(digest.hex)").first
            .flatMap { Digest(hex: try $0(0)) }
    }

    /// Replaces an earlier record.
    public func setLocationFreeDigest(_ free: Digest, of digest: Digest, lease: LeaseID) async throws {
        try await write { transaction in
            try await Self.release(heldLease: lease, transaction)
            try await transaction.run("""
                INSERT INTO location_free_blobs (digest, free_digest) VALUES (\(digest.hex), \(free.hex))
                ON CONFLICT (digest) DO UPDATE SET free_digest = excluded.free_digest
                """)
        }
    }

    /// The id of the object row at `path`, or `nil`.
    private static func objectId(at path: ObjectPath, _ transaction: any CatalogTransaction) async throws -> Int64? {
        try await transaction.value("SELECT id FROM objects WHERE bucket = \(path.bucket) AND name = \(path.name)")
    }

    /// The (digest, created_at) rows of the download tokens of object `objectId`, oldest first.
    private static func downloadTokenRows(of objectId: Int64, _ transaction: any CatalogTransaction) async throws -> [SQLRow] {
        try await transaction.rows("SELECT digest, created_at FROM download_tokens WHERE object_id = \(objectId) ORDER BY \(CatalogSQL.insertionOrder)")
    }

    /// A download token from a (digest, created_at) row: its id is the digest's first 16 hex digits.
    private static func downloadToken(_ row: SQLRow) throws -> DownloadToken {
        DownloadToken(id: String((try row(0) as String).prefix(16)), createdAt: try row(1))
    }
}

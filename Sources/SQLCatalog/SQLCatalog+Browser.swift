import Foundation
import SpotCore

extension SQLCatalog {
    /// The SQL condition that a secret of `table` (a session or a share link) made at its
    /// `created_at` by user `uidColumn` is still live at `now`: not expired, and made after
    /// the user's tokens were last revoked.
    private static func isLive(_ table: StaticString, uidColumn: StaticString, at now: Date) -> CatalogSQL {
        """
        \(unescaped: "\(table)").expires_at > \(now) AND EXISTS (
            SELECT 1 FROM users WHERE users.uid = \(unescaped: "\(table).\(uidColumn)")
              AND (users.revoked_at IS NULL OR users.revoked_at < \(unescaped: "\(table)").created_at))
        """
    }

    /// Records in `table` (sessions or sign-in links) the secret with `digest` of `uid`, after
    /// forgetting the user's ones that expired by `createdAt`; `false` when there is no such user.
    private static func insertSecret(
        into table: StaticString, _ digest: Digest, of uid: String, createdAt: Date, expiresAt: Date, _ transaction: any CatalogTransaction
    ) async throws -> Bool {
        guard try await userExists(uid, transaction) else { return false }
        try await transaction.run("DELETE FROM \(unescaped: "\(table)") WHERE uid = \(uid) AND expires_at <= \(createdAt)")
        try await transaction.run("""
            INSERT INTO \(unescaped: "\(table)") (digest, uid, created_at, expires_at) VALUES (\(digest.hex), \(uid), \(createdAt), \(expiresAt))
            """)
        return true
    }

    public func addSession(_ digest: Digest, of uid: String, createdAt: Date, expiresAt: Date) async throws -> Bool {
        try await write { transaction in
            guard try await Self.insertSecret(into: "browser_sessions", digest, of: uid, createdAt: createdAt, expiresAt: expiresAt, transaction)
            else { return false }
            try await transaction.run("""
                DELETE FROM browser_sessions WHERE uid = \(uid) AND created_at < (
                    SELECT created_at FROM browser_sessions WHERE uid = \(uid) ORDER BY created_at DESC LIMIT 1 OFFSET \(maxSessionsPerUser - 1))
                """)
            return true
        }
    }

    /// The stored digest is compared in constant time.
    public func user(sessionDigest digest: Digest, at now: Date) async throws -> User? {
        try await readCommitted { transaction in
            guard let row = try await transaction.row("""
                SELECT digest, uid FROM browser_sessions WHERE digest = \(digest.hex) AND \(Self.isLive("browser_sessions", uidColumn: "uid", at: now))
                """),
                let stored = Digest(hex: try row(0)), stored.equalsInConstantTime(digest)
            else { return nil }
            return try await Self.user(try row(1), transaction)
        }
    }

    public func endSession(_ digest: Digest) async throws -> Bool {
        try await write { transaction in
            try await !transaction.rows("DELETE FROM browser_sessions WHERE digest = \(digest.hex) RETURNING digest").isEmpty
        }
    }

    public func addSignInLink(_ digest: Digest, for uid: String, createdAt: Date, expiresAt: Date) async throws -> Bool {
        try await write { transaction in
            try await Self.insertSecret(into: "sign_in_links", digest, of: uid, createdAt: createdAt, expiresAt: expiresAt, transaction)
        }
    }

    /// One `DELETE … RETURNING`: of two uses at once, only one deletes the row.
    public func useSignInLink(_ digest: Digest, at now: Date) async throws -> String? {
        try await write { transaction in
            guard let row = try await transaction.row("DELETE FROM sign_in_links WHERE digest = \(digest.hex) RETURNING digest, uid, expires_at, created_at"),
                  let stored = Digest(hex: try row(0)), stored.equalsInConstantTime(digest),
                  try (row(2) as Date) > now
            else { return nil }
            let uid: String = try row(1), createdAt: Date = try row(3)
            let standing = try await transaction.row("SELECT 1 FROM users WHERE uid = \(uid) AND (revoked_at IS NULL OR revoked_at < \(createdAt))")
            return standing == nil ? nil : uid
        }
    }

    public func addSpotShare(_ share: SpotShare, digest: Digest) async throws -> Bool {
        try await write { transaction in
            guard try await Self.userExists(share.createdBy, transaction) else { return false }
            try await transaction.run("""
                DELETE FROM spot_shares WHERE bucket = \(share.bucket) AND spot_id = \(share.spotId) AND expires_at <= \(share.createdAt)
                """)
            try await transaction.run("""
                INSERT INTO spot_shares (digest, bucket, spot_id, created_by, created_at, expires_at)
                VALUES (\(digest.hex), \(share.bucket), \(share.spotId), \(share.createdBy), \(share.createdAt), \(share.expiresAt))
                """)
            return true
        }
    }

    /// The stored digest is compared in constant time.
    public func spotShare(digest: Digest, at now: Date) async throws -> SpotShare? {
        try await readCommitted { transaction in
            guard let row = try await transaction.row("""
                SELECT \(unescaped: Self.spotShareColumns) FROM spot_shares
                WHERE digest = \(digest.hex) AND \(Self.isLive("spot_shares", uidColumn: "created_by", at: now))
                """),
                let stored = Digest(hex: try row(0)), stored.equalsInConstantTime(digest)
            else { return nil }
            return try Self.spotShare(row)
        }
    }

    public func spotShares(bucket: String, spotId: String, at now: Date) async throws -> [SpotShare] {
        try await read { transaction in
            try await transaction.rows("""
                SELECT \(unescaped: Self.spotShareColumns) FROM spot_shares
                WHERE bucket = \(bucket) AND spot_id = \(spotId) AND \(Self.isLive("spot_shares", uidColumn: "created_by", at: now))
                ORDER BY created_at, digest
                """).map(Self.spotShare)
        }
    }

    /// A link's id is the first 16 hex digits of its digest.
    public func revokeSpotShare(_ id: String, bucket: String, spotId: String) async throws -> Bool {
        guard id.count == 16, id.allSatisfy(\.isHexDigit) else { return false }
        return try await write { transaction in
            try await !transaction.rows("""
                DELETE FROM spot_shares WHERE bucket = \(bucket) AND spot_id = \(spotId) AND digest LIKE \(id.lowercased() + "%") RETURNING digest
                """).isEmpty
        }
    }

    private static var spotShareColumns: String { "digest, bucket, spot_id, created_by, created_at, expires_at" }

    /// A row of `spotShareColumns`.
    private static func spotShare(_ row: SQLRow) throws -> SpotShare {
        guard let digest = Digest(hex: try row(0)) else { throw SpotError(.internal, "the catalog holds a share link with a malformed digest") }
        return SpotShare(
            id: SpotShare.id(of: digest), bucket: try row(1), spotId: try row(2), createdBy: try row(3), createdAt: try row(4), expiresAt: try row(5))
    }
}

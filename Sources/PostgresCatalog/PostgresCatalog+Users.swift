import Foundation
import PostgresNIO
import SpotCore

extension PostgresCatalog {
    /// Creates `uid` with one token, stored only as its SHA-256 `tokenDigest`; the uid is
    /// stored as given (validate it with `User.validate(uid:)` first).
    /// - Throws: `SpotError(.conflict)` when the uid exists, or when another user already
    ///   has a token with this digest; nothing is written then.
    public func addUser(_ uid: String, tokenDigest: Digest) async throws -> User {
        try await write { connection in
            let now = Date()
            let created = try await connection.query("""
                INSERT INTO users (uid, created_at) VALUES (\(uid), \(now)) ON CONFLICT (uid) DO NOTHING RETURNING uid
                """, logger: self.logger).collect()
            guard !created.isEmpty else { throw SpotError(.conflict, "user '\(uid)' already exists") }
            try await Self.insertToken(tokenDigest, for: uid, at: now, connection, logger: self.logger)
            guard let user = try await Self.user(uid, connection, logger: self.logger) else {
                throw SpotError(.internal, "user '\(uid)' vanished while it was being created")
            }
            return user
        }
    }

    /// Gives an existing user one more token. Returns `false` when there is no such user.
    /// - Throws: `SpotError(.conflict)` when a token with this digest exists already.
    public func addToken(for uid: String, tokenDigest: Digest) async throws -> Bool {
        try await write { connection in
            guard try await Self.userExists(uid, connection, logger: self.logger) else { return false }
            try await Self.insertToken(tokenDigest, for: uid, at: Date(), connection, logger: self.logger)
            return true
        }
    }

    /// The user owning the token with this digest, or `nil` (a revoked token is gone); the
    /// stored digest is compared in constant time. Kept while the change feed's stamp stays.
    public func user(tokenDigest: Digest) async throws -> User? {
        try await memo.user(tokenDigest: tokenDigest) {
            try await read { connection in
                guard let row = try await connection.query(
                    "SELECT digest, uid FROM tokens WHERE digest = \(tokenDigest.hex)", logger: self.logger
                ).collect().first else { return nil }
                let (hex, uid) = try row.decode((String, String).self)
                guard let stored = Digest(hex: hex), stored.equalsInConstantTime(tokenDigest) else { return nil }
                return try await Self.user(uid, connection, logger: self.logger)
            }
        }
    }

    /// Users by uid (byte order), after `uid` and at most `limit` when given, with their
    /// live token counts and claims.
    public func users(after uid: String?, limit: Int?) async throws -> [User] {
        try await read { connection in
            let rows = try await connection.query("""
                SELECT \(unescaped: Self.userColumns) FROM users WHERE \(uid)::text IS NULL OR uid > \(uid) ORDER BY uid LIMIT \(limit)
                """, logger: self.logger).collect()
            let uids = try rows.map { try $0.decode(String.self) }
            var claims: [String: [String: String]] = [:]
            for row in try await connection.query(
                "SELECT uid, key, value FROM claims WHERE uid = ANY(\(uids))", logger: self.logger
            ).collect() {
                let (uid, key, value) = try row.decode((String, String, String).self)
                claims[uid, default: [:]][key] = value
            }
            return try rows.map { row in try Self.user(row) { claims[$0] ?? [:] } }
        }
    }

    /// Grants or withdraws the admin role of `uid`; `nil` when there is no such user.
    public func setAdmin(of uid: String, _ isAdmin: Bool) async throws -> User? {
        try await write { connection in
            try await connection.query("UPDATE users SET is_admin = \(isAdmin) WHERE uid = \(uid)", logger: self.logger)
            return try await Self.user(uid, connection, logger: self.logger)
        }
    }

    /// Deletes `uid`, its tokens and claims (cascade) and its upload sessions; its objects and spots stay.
    public func deleteUser(_ uid: String) async throws -> Bool {
        try await write { connection in
            guard try await !connection.query("DELETE FROM users WHERE uid = \(uid) RETURNING uid", logger: self.logger).collect().isEmpty
            else { return false }
            try await connection.query("DELETE FROM upload_sessions WHERE owner = \(uid)", logger: self.logger)
            return true
        }
    }

    /// Sets (or, with a `nil` value, removes) claims of `uid` and returns the user, or `nil`
    /// when there is no such user. Keys and values are stored as given.
    public func updateClaims(of uid: String, _ changes: [String: String?]) async throws -> User? {
        try await write { connection in
            guard try await Self.userExists(uid, connection, logger: self.logger) else { return nil }
            for (key, value) in changes {
                if let value {
                    try await connection.query("""
                        INSERT INTO claims (uid, key, value) VALUES (\(uid), \(key), \(value))
                        ON CONFLICT (uid, key) DO UPDATE SET value = EXCLUDED.value
                        """, logger: self.logger)
                } else {
                    try await connection.query("DELETE FROM claims WHERE uid = \(uid) AND key = \(key)", logger: self.logger)
                }
            }
            return try await Self.user(uid, connection, logger: self.logger)
        }
    }

    /// Deletes every token of `uid`; its objects and spots stay. Returns `false` when there
    /// is no such user, `true` otherwise (also when it had no token left).
    public func revokeTokens(of uid: String) async throws -> Bool {
        try await write { connection in
            guard try await Self.userExists(uid, connection, logger: self.logger) else { return false }
            try await connection.query("DELETE FROM tokens WHERE uid = \(uid)", logger: self.logger)
            try await connection.query("UPDATE users SET revoked_at = \(Date()) WHERE uid = \(uid)", logger: self.logger)
            return true
        }
    }

    /// User `uid` with its token count and claims, or `nil`. Kept while the change feed's stamp stays.
    public func user(uid: String) async throws -> User? {
        try await memo.user(uid: uid) {
            try await read { connection in try await Self.user(uid, connection, logger: self.logger) }
        }
    }

    /// Creates `uid` (without tokens) or sets its provider and last sign-in.
    public func recordSignIn(uid: String, provider: String, at time: Date) async throws -> User {
        try await write { connection in
            try await connection.query("""
                INSERT INTO users (uid, created_at, provider, last_sign_in_at) VALUES (\(uid), \(time), \(provider), \(time))
                ON CONFLICT (uid) DO UPDATE SET provider = EXCLUDED.provider, last_sign_in_at = EXCLUDED.last_sign_in_at
                """, logger: self.logger)
            guard let user = try await Self.user(uid, connection, logger: self.logger) else {
                throw SpotError(.internal, "user '\(uid)' vanished while its sign-in was recorded")
            }
            return user
        }
    }

    /// The columns of `users` that `user(_:claims:)` decodes, with the token count.
    static let userColumns = """
        uid, created_at, provider, last_sign_in_at, revoked_at, is_admin, download_token_epoch,
        (SELECT COUNT(*) FROM tokens WHERE tokens.uid = users.uid)
        """

    /// A row of `userColumns`, with the claims `claims` gives for its uid.
    static func user(_ row: PostgresRow, claims: (String) -> [String: String]) throws -> User {
        let (uid, createdAt, provider, lastSignInAt, revokedAt, isAdmin, epoch, tokenCount) =
            try row.decode((String, Date, String?, Date?, Date?, Bool, Int, Int).self)
        return User(
            uid: uid, createdAt: createdAt, tokenCount: tokenCount, claims: claims(uid), provider: provider,
            lastSignInAt: lastSignInAt, revokedAt: revokedAt, isAdmin: isAdmin, downloadTokenEpoch: epoch)
    }

    /// User `uid` with its token count and claims, or `nil`.
    private static func user(_ uid: String, _ connection: PostgresConnection, logger: Logger) async throws -> User? {
        guard let row = try await connection.query(
            "SELECT \(unescaped: userColumns) FROM users WHERE uid = \(uid)", logger: logger
        ).collect().first else { return nil }
        var claims: [String: String] = [:]
        for row in try await connection.query("SELECT key, value FROM claims WHERE uid = \(uid)", logger: logger).collect() {
            let (key, value) = try row.decode((String, String).self)
            claims[key] = value
        }
        return try user(row) { _ in claims }
    }

    private static func userExists(_ uid: String, _ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await !connection.query("SELECT 1 FROM users WHERE uid = \(uid)", logger: logger).collect().isEmpty
    }

    /// Inserts the token `digest` of `uid`; a digest already in use is a conflict.
    private static func insertToken(_ digest: Digest, for uid: String, at now: Date, _ connection: PostgresConnection, logger: Logger) async throws {
        let inserted = try await connection.query("""
            INSERT INTO tokens (digest, uid, created_at) VALUES (\(digest.hex), \(uid), \(now)) ON CONFLICT (digest) DO NOTHING RETURNING digest
            """, logger: logger).collect()
        guard !inserted.isEmpty else { throw SpotError(.conflict, "that token is already in use") }
    }
}

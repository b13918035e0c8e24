import Foundation
import SpotCore

extension SQLCatalog {
    /// The uid is stored as given (validate it with `User.validate(uid:)` first). A token
    /// digest in use by another user is a conflict too.
    public func addUser(_ uid: String, tokenDigest: Digest) async throws -> User {
        let now = clock()
        return try await write { transaction in
            let created = try await transaction.rows(
                "INSERT INTO users (uid, created_at) VALUES (\(uid), \(now)) ON CONFLICT (uid) DO NOTHING RETURNING uid")
            guard !created.isEmpty else { throw SpotError(.conflict, "user '\(uid)' already exists") }
            try await Self.insertToken(tokenDigest, for: uid, at: now, transaction)
            guard let user = try await Self.user(uid, transaction) else {
                throw SpotError(.internal, "user '\(uid)' vanished while it was being created")
            }
            return user
        }
    }

    /// A token digest in use is a conflict.
    public func addToken(for uid: String, tokenDigest: Digest) async throws -> Bool {
        let now = clock()
        return try await write { transaction in
            guard try await Self.userExists(uid, transaction) else { return false }
            try await Self.insertToken(tokenDigest, for: uid, at: now, transaction)
            return true
        }
    }

    /// The stored digest is compared in constant time. Kept while the change feed's stamp
    /// stays. The token, the user and the claims need not be one snapshot: a user gone
    /// meanwhile is no user.
    public func user(tokenDigest: Digest) async throws -> User? {
        try await memo.user(tokenDigest: tokenDigest) {
            try await readCommitted { transaction in
                guard let row = try await transaction.row("SELECT digest, uid FROM tokens WHERE digest = \(tokenDigest.hex)"),
                      let stored = Digest(hex: try row(0)), stored.equalsInConstantTime(tokenDigest)
                else { return nil }
                return try await Self.user(try row(1), transaction)
            }
        }
    }

    /// Two queries: users with their token counts, then their claims.
    public func users(after uid: String?, limit: Int?) async throws -> [User] {
        try await read { transaction in
            var query: CatalogSQL = "SELECT \(unescaped: Self.userColumns) FROM users"
            if let uid { query = query + " WHERE uid > \(uid)" }
            query = query + " ORDER BY uid"
            if let limit { query = query + " LIMIT \(max(limit, 0))" }
            let rows = try await transaction.rows(query)
            let uids: [String] = try rows.map { try $0(0) }
            var claims: [String: [String: String]] = [:]
            for row in try await transaction.rows("SELECT uid, key, value FROM claims WHERE uid \(oneOf: uids)") {
                claims[try row(0) as String, default: [:]][try row(1) as String] = try row(2) as String
            }
            return try rows.map { row in try Self.user(row) { claims[$0] ?? [:] } }
        }
    }

    public func setAdmin(of uid: String, _ isAdmin: Bool) async throws -> User? {
        try await write { transaction in
            try await transaction.run("UPDATE users SET is_admin = \(isAdmin) WHERE uid = \(uid)")
            return try await Self.user(uid, transaction)
        }
    }

    /// Tokens and claims go by cascade.
    public func deleteUser(_ uid: String) async throws -> Bool {
        try await write { transaction in
            guard try await !transaction.rows("DELETE FROM users WHERE uid = \(uid) RETURNING uid").isEmpty else { return false }
            try await transaction.run("DELETE FROM upload_sessions WHERE owner = \(uid)")
            return true
        }
    }

    public func updateClaims(of uid: String, _ changes: [String: String?]) async throws -> User? {
        try await write { transaction in
            guard try await Self.userExists(uid, transaction) else { return nil }
            for (key, value) in changes {
                if let value {
                    try await transaction.run("""
                        INSERT INTO claims (uid, key, value) VALUES (\(uid), \(key), \(value))
                        ON CONFLICT (uid, key) DO UPDATE SET value = excluded.value
                        """)
                } else {
                    try await transaction.run("DELETE FROM claims WHERE uid = \(uid) AND key = \(key)")
                }
            }
            return try await Self.user(uid, transaction)
        }
    }

    /// `true` also when the user had no token left.
    public func revokeTokens(of uid: String) async throws -> Bool {
        let now = clock()
        return try await write { transaction in
            guard try await Self.userExists(uid, transaction) else { return false }
            try await transaction.run("DELETE FROM tokens WHERE uid = \(uid)")
            try await transaction.run("UPDATE users SET revoked_at = \(now) WHERE uid = \(uid)")
            return true
        }
    }

    /// Kept while the change feed's stamp stays.
    /// The user and the claims need not be one snapshot.
    public func user(uid: String) async throws -> User? {
        try await memo.user(uid: uid) {
            try await readCommitted { transaction in try await Self.user(uid, transaction) }
        }
    }

    public func recordSignIn(uid: String, provider: String, at time: Date) async throws -> User {
        try await write { transaction in
            try await transaction.run("""
                INSERT INTO users (uid, created_at, provider, last_sign_in_at) VALUES (\(uid), \(time), \(provider), \(time))
                ON CONFLICT (uid) DO UPDATE SET provider = excluded.provider, last_sign_in_at = excluded.last_sign_in_at
                """)
            guard let user = try await Self.user(uid, transaction) else {
                throw SpotError(.internal, "user '\(uid)' vanished while its sign-in was recorded")
            }
            return user
        }
    }

    /// The columns of `users` that `user(_:claims:)` decodes, with the token count.
    static var userColumns: String {
        """
        uid, created_at, provider, last_sign_in_at, revoked_at, is_admin, download_token_epoch,
        (SELECT COUNT(*) FROM tokens WHERE tokens.uid = users.uid)
        """
    }

    /// A row of `userColumns`, with the claims `claims` gives for its uid.
    static func user(_ row: SQLRow, claims: (String) -> [String: String]) throws -> User {
        let uid: String = try row(0)
        return User(
            uid: uid, createdAt: try row(1), tokenCount: try row(7), claims: claims(uid), provider: try row(2),
            lastSignInAt: try row(3), revokedAt: try row(4), isAdmin: try row(5), downloadTokenEpoch: try row(6))
    }

    /// User `uid` with its token count and claims, or `nil`: one statement, a row per claim
    /// (one without a claim when there is none).
    static func user(_ uid: String, _ transaction: any CatalogTransaction) async throws -> User? {
        let rows = try await transaction.rows("""
            SELECT u.*, claims.key, claims.value FROM (SELECT \(unescaped: userColumns) FROM users WHERE uid = \(uid)) u
            LEFT JOIN claims ON claims.uid = u.uid
            """)
        guard let first = rows.first else { return nil }
        var claims: [String: String] = [:]
        for row in rows {
            if let key: String = try row(8) { claims[key] = try row(9) as String }
        }
        return try user(first) { _ in claims }
    }

    static func userExists(_ uid: String, _ transaction: any CatalogTransaction) async throws -> Bool {
        try await transaction.row("SELECT 1 FROM users WHERE uid = \(uid)") != nil
    }

    /// Inserts the token `digest` of `uid`; a digest already in use is a conflict.
    private static func insertToken(_ digest: Digest, for uid: String, at now: Date, _ transaction: any CatalogTransaction) async throws {
        let inserted = try await transaction.rows("""
            INSERT INTO tokens (digest, uid, created_at) VALUES (\(digest.hex), \(uid), \(now)) ON CONFLICT (digest) DO NOTHING RETURNING digest
            """)
        guard !inserted.isEmpty else { throw SpotError(.conflict, "that token is already in use") }
    }
}

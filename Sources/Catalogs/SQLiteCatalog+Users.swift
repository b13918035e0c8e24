import Foundation
import GRDB
import CatalogPlanning
import SpotCore

extension SQLiteCatalog {
    /// Creates `uid` with one token, stored only as its SHA-256 `tokenDigest`.
    ///
    /// The uid is stored as given (validate it with `User.validate(uid:)` first).
    /// - Throws: `SpotError(.conflict)` when the uid exists, or when another user already
    ///   has a token with this digest; nothing is written then.
    public func addUser(_ uid: String, tokenDigest: Digest) async throws -> User {
        try await write { db in
            let now = Date()
            do {
                try UserRecord(uid: uid, createdAt: now).insert(db)
            } catch let error as DatabaseError where error.isUniqueViolation {
                throw SpotError(.conflict, "user '\(uid)' already exists")
            }
            try Self.insertToken(tokenDigest, for: uid, at: now, db)
            guard let user = try Self.user(uid, db) else {
                throw SpotError(.internal, "user '\(uid)' vanished while it was being created")
            }
            return user
        }
    }

    /// Gives an existing user one more token. Returns `false` when there is no such user.
    ///
    /// - Throws: `SpotError(.conflict)` when a token with this digest exists already, for
    ///   this user or another.
    public func addToken(for uid: String, tokenDigest: Digest) async throws -> Bool {
        try await write { db in
            guard try UserRecord.exists(db, key: uid) else { return false }
            try Self.insertToken(tokenDigest, for: uid, at: Date(), db)
            return true
        }
    }

    /// The user owning the token with this digest, or `nil` (a revoked token is gone).
    public func user(tokenDigest: Digest) async throws -> User? {
        guard let memo else { return try readUser(tokenDigest: tokenDigest) }
        return try await memo.user(tokenDigest: tokenDigest) { try readUser(tokenDigest: tokenDigest) }
    }

    private func readUser(tokenDigest: Digest) throws -> User? {
        try readNow { db in
            guard let token = try Row.fetchOne(db.cachedStatement(sql: "SELECT digest, uid FROM tokens WHERE digest = ?"), arguments: [tokenDigest.hex]),
                  let stored = Digest(hex: token["digest"]), stored.equalsInConstantTime(tokenDigest)
            else { return nil }
            return try Self.user(token["uid"], db)
        }
    }

    /// Users by uid (byte order), after `uid` and at most `limit` when given, with their
    /// live token counts and claims.
    public func users(after uid: String?, limit: Int?) async throws -> [User] {
        try readNow { db in
            var request = UserRecord.all()
            if let uid { request = request.filter(Column("uid") > uid) }
            if let limit { request = request.order(Column("uid")).limit(limit) }
            let summaries = try UserRecord.summaries(request).fetchAll(db)
            var claims: [String: [String: String]] = [:]
            // All claims for a whole listing: one bound variable per uid would pass SQLite's limit.
            let claimRecords = limit == nil ? ClaimRecord.all() : ClaimRecord.filter(summaries.map(\.uid).contains(Column("uid")))
            for claim in try claimRecords.fetchAll(db) {
                claims[claim.uid, default: [:]][claim.key] = claim.value
            }
            return summaries.map { $0.user(claims: claims[$0.uid] ?? [:]) }
        }
    }

    /// Grants or withdraws the admin role of `uid`; `nil` when there is no such user.
    public func setAdmin(of uid: String, _ isAdmin: Bool) async throws -> User? {
        try await write { db in
            try db.execute(sql: "UPDATE users SET isAdmin = ? WHERE uid = ?", arguments: [isAdmin, uid])
            return try Self.user(uid, db)
        }
    }

    /// Deletes `uid`, its tokens and claims (cascade) and its upload sessions; its objects and spots stay.
    public func deleteUser(_ uid: String) async throws -> Bool {
        try await write { db in
            guard try UserRecord.deleteOne(db, key: uid) else { return false }
            try db.execute(sql: "DELETE FROM uploadSessions WHERE owner = ?", arguments: [uid])
            return true
        }
    }

    /// Sets (or, with a `nil` value, removes) claims of `uid` and returns the user, or `nil`
    /// when there is no such user. Keys and values are stored as given.
    public func updateClaims(of uid: String, _ changes: [String: String?]) async throws -> User? {
        try await write { db in
            guard try UserRecord.exists(db, key: uid) else { return nil }
            for (key, value) in changes {
                if let value {
                    try ClaimRecord(uid: uid, key: key, value: value).upsert(db)
                } else {
                    try ClaimRecord.deleteOne(db, key: ["uid": uid, "key": key])
                }
            }
            return try Self.user(uid, db)
        }
    }

    /// Deletes every token of `uid`; its objects and spots stay. Returns `false` when there
    /// is no such user, `true` otherwise (also when it had no token left).
    public func revokeTokens(of uid: String) async throws -> Bool {
        try await write { db in
            guard try UserRecord.exists(db, key: uid) else { return false }
            try TokenRecord.filter(Column("uid") == uid).deleteAll(db)
            try db.execute(sql: "UPDATE users SET revokedAt = ? WHERE uid = ?", arguments: [Date(), uid])
            return true
        }
    }

    /// User `uid` with its token count and claims, or `nil`.
    public func user(uid: String) async throws -> User? {
        guard let memo else { return try readNow { db in try Self.user(uid, db) } }
        return try await memo.user(uid: uid) { try readNow { db in try Self.user(uid, db) } }
    }

    /// Creates `uid` (without tokens) or sets its provider and last sign-in.
    public func recordSignIn(uid: String, provider: String, at time: Date) async throws -> User {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO users (uid, createdAt, provider, lastSignInAt) VALUES (?1, ?2, ?3, ?2)
                ON CONFLICT (uid) DO UPDATE SET provider = excluded.provider, lastSignInAt = excluded.lastSignInAt
                """, arguments: [uid, time, provider])
            guard let user = try Self.user(uid, db) else {
                throw SpotError(.internal, "user '\(uid)' vanished while its sign-in was recorded")
            }
            return user
        }
    }

    /// User `uid` with its token count and claims, or `nil`.
    private static func user(_ uid: String, _ db: Database) throws -> User? {
        // Cached statements and rows read by hand: this runs for every authenticated request.
        guard let summary = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT createdAt, provider, lastSignInAt, revokedAt, isAdmin, downloadTokenEpoch,
                   (SELECT COUNT(*) FROM tokens WHERE tokens.uid = users.uid) AS tokenCount
            FROM users WHERE uid = ?
            """), arguments: [uid])
        else { return nil }
        var claims: [String: String] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT key, value FROM claims WHERE uid = ?"), arguments: [uid])
        while let row = try rows.next() { claims[row["key"]] = row["value"] }
        return User(
            uid: uid, createdAt: summary["createdAt"], tokenCount: summary["tokenCount"], claims: claims,
            provider: summary["provider"], lastSignInAt: summary["lastSignInAt"], revokedAt: summary["revokedAt"],
            isAdmin: summary["isAdmin"], downloadTokenEpoch: summary["downloadTokenEpoch"])
    }

    /// Inserts the token `digest` of `uid`; a digest already in use is a conflict.
    private static func insertToken(_ digest: Digest, for uid: String, at now: Date, _ db: Database) throws {
        do {
            try TokenRecord(digest: digest.hex, uid: uid, createdAt: now).insert(db)
        } catch let error as DatabaseError where error.isUniqueViolation {
            throw SpotError(.conflict, "that token is already in use")
        }
    }
}

extension DatabaseError {
    /// Whether a PRIMARY KEY or UNIQUE constraint refused the statement.
    var isUniqueViolation: Bool {
        extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY || extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE
    }
}

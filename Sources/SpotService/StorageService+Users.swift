import Foundation
import SpotCore

/// Users, their tokens and claims, sign-in with SpotStore's tokens and with ID tokens.
extension StorageService {
    /// The user holding `token` (one of SpotStore's own, or an ID token when `identities`
    /// is set), or `nil` (anonymous) when there is no token: the rules decide what
    /// anonymous requests may do.
    /// - Throws: `SpotError(.unauthenticated)` when a token is given and not live.
    public func authenticate(token: String?) async throws -> User? {
        guard let token else { return nil }
        if looksLikeJWT(token) {
            guard let identities else {
                throw SpotError(.unauthenticated, "this server accepts no ID tokens (start it with --firebase-project or --auth-issuer); send a SpotStore token")
            }
            return try await signIn(try await identities.verify(token))
        }
        guard !token.isEmpty, let user = try await catalog.user(tokenDigest: Tokens.digest(of: token)) else {
            throw SpotError(.unauthenticated, "the token is not valid (it may have been revoked)")
        }
        return user
    }

    /// How often a user's last sign-in with an ID token is written down: every write is a
    /// commit, and a commit drops what every server keeps (kept answers, catalog reads).
    static let signInRecordInterval: TimeInterval = 86400

    /// The user of a verified ID token, with its claims: recorded on first sight (and its
    /// last sign-in at most once a day).
    /// - Throws: `.unauthenticated` when the uid belongs to a user of SpotStore's own tokens
    ///   or of another provider (one uid space: no provider may take over another's
    ///   users), or when the user's tokens were revoked after the token was issued.
    func signIn(_ identity: VerifiedIdentity) async throws -> User {
        let now = configuration.now()
        var user = try await catalog.user(uid: identity.uid)
        if let existing = user, existing.provider != identity.provider {
            throw SpotError(.unauthenticated, existing.provider.map {
                "the ID token is refused: uid \(identity.uid) signs in through \($0), not \(identity.provider)"
            } ?? "the ID token is refused: uid \(identity.uid) is a user of SpotStore's own tokens, not of \(identity.provider)")
        }
        if user?.lastSignInAt.map({ now.timeIntervalSince($0) >= Self.signInRecordInterval }) != false {
            user = try await catalog.recordSignIn(uid: identity.uid, provider: identity.provider, at: now)
        }
        guard var user else { throw SpotError(.internal, "user '\(identity.uid)' was not recorded") }
        // `iat` has whole seconds: a token issued in the second of the revocation passes.
        if let revokedAt = user.revokedAt, identity.issuedAt < Date(timeIntervalSince1970: revokedAt.timeIntervalSince1970.rounded(.down)) {
            throw SpotError(.unauthenticated, "the ID token was issued before \(user.uid)'s tokens were revoked (\(revokedAt.formatted(.iso8601))); sign in again")
        }
        user.idToken = identity
        return user
    }

    /// Refuses what `uid` did at `time` (started an upload, made a link) unless that sign-in
    /// still stands: the user exists and its tokens were not revoked since.
    /// - Parameters:
    ///   - who: the user's part, for the message ("the user who made this link").
    ///   - remedy: what to do instead ("ask for a new link").
    /// - Returns: the user.
    /// - Throws: `.forbidden` naming which of these happened.
    @discardableResult
    func requireStanding(_ uid: String, since time: Date, as who: String, remedy: String) async throws -> User {
        guard let user = try await catalog.user(uid: uid) else {
            throw SpotError(.forbidden, "\(who) no longer exists; \(remedy)")
        }
        if let revoked = user.revokedAt, revoked >= time {
            throw SpotError(.forbidden, "the tokens of \(who) were revoked since; \(remedy)")
        }
        return user
    }

    /// Creates `uid` with `claims` and returns it with its first token, which is not stored anywhere.
    public func addUser(_ uid: String, claims: [String: String] = [:]) async throws -> (user: User, token: String) {
        try User.validate(uid: uid)
        for (key, value) in claims { try User.validate(claim: key, value: value) }
        let token = Tokens.generate()
        var user = try await catalog.addUser(uid, tokenDigest: Tokens.digest(of: token))
        if !claims.isEmpty { user = try await updateClaims(of: uid, claims) }
        return (user, token)
    }

    /// Sets claims of `uid` (a `nil` value removes one); the rules see them at once.
    public func updateClaims(of uid: String, _ changes: [String: String?]) async throws -> User {
        for (key, value) in changes { try User.validate(claim: key, value: value) }
        guard let user = try await catalog.updateClaims(of: uid, changes) else {
            throw Self.noSuchUser(uid)
        }
        return user
    }

    /// A new token for an existing user.
    public func issueToken(for uid: String) async throws -> String {
        let token = Tokens.generate()
        guard try await catalog.addToken(for: uid, tokenDigest: Tokens.digest(of: token)) else {
            throw Self.noSuchUser(uid)
        }
        return token
    }

    /// Makes every token of `uid` stop working at once, and with them the links `uid` made
    /// (signed URLs, download tokens made on request); its objects stay. With
    /// `replacingDownloadTokens`, the download tokens on its objects are replaced too
    /// (`replaceDownloadTokens(of:)`), after checking that this server can, so that a
    /// refusal changes nothing.
    /// - Returns: how many objects got a new download token; `nil` without `replacingDownloadTokens`.
    @discardableResult
    public func revokeTokens(of uid: String, replacingDownloadTokens: Bool = false) async throws -> Int? {
        if replacingDownloadTokens { _ = try downloadTokenKey() }
        guard try await catalog.revokeTokens(of: uid) else { throw Self.noSuchUser(uid) }
        return replacingDownloadTokens ? try await replaceDownloadTokens(of: uid) : nil
    }

    /// Users by uid, after `uid` and at most `limit` when given.
    public func users(after uid: String? = nil, limit: Int? = nil) async throws -> [User] {
        try await catalog.users(after: uid, limit: limit)
    }

    /// User `uid`.
    /// - Throws: `.notFound` when there is none.
    public func user(_ uid: String) async throws -> User {
        guard let user = try await catalog.user(uid: uid) else { throw Self.noSuchUser(uid) }
        return user
    }

    /// Grants or withdraws the admin role of `uid` (the command line's to do).
    public func setAdmin(of uid: String, _ isAdmin: Bool) async throws -> User {
        guard let user = try await catalog.setAdmin(of: uid, isAdmin) else { throw Self.noSuchUser(uid) }
        return user
    }

    /// Deletes `uid` with its tokens and claims; its objects and spots stay (`stats` counts
    /// them). A user of ID tokens who signs in again is recorded anew.
    public func deleteUser(_ uid: String) async throws {
        guard try await catalog.deleteUser(uid) else { throw Self.noSuchUser(uid) }
    }

    /// `user`, once it holds the admin role.
    /// - Throws: `.unauthenticated` without a user, `.forbidden` without the role.
    public static func admin(_ user: User?) throws(SpotError) -> User {
        guard let user else { throw SpotError(.unauthenticated, "the admin API needs a token of a user with the admin role") }
        guard user.isAdmin else {
            throw SpotError(.forbidden, "\(user.uid) does not hold the admin role (granted with `spotstore users add NAME --admin` or `spotstore users admin NAME`)")
        }
        return user
    }

    /// The 404 of an operation on a user that does not exist.
    static func noSuchUser(_ uid: String) -> SpotError {
        SpotError(.notFound, "there is no user '\(uid)'")
    }
}

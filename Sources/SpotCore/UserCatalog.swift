import Foundation

/// Users of SpotStore's own tokens and of ID tokens: their token digests, claims, admin
/// role, sign-ins and revocations. A uid is compared by its bytes; a token is kept only as
/// its SHA-256 digest. "Absent" is `nil` (or `false`), never an error.
public protocol UserCatalog: Sendable {

    /// Creates `uid` with one token, stored only as its SHA-256 `tokenDigest`.
    /// - Throws: `SpotError(.conflict)` when the uid exists.
    func addUser(_ uid: String, tokenDigest: Digest) async throws -> User

    /// Sets (or, with a `nil` value, removes) claims of `uid` and returns the user, or `nil`
    /// when there is no such user. Keys and values are validated by the caller.
    func updateClaims(of uid: String, _ changes: [String: String?]) async throws -> User?

    /// Gives an existing user one more token. Returns `false` when there is no such user.
    func addToken(for uid: String, tokenDigest: Digest) async throws -> Bool

    /// The user owning the token with this digest, with its claims, or `nil`.
    func user(tokenDigest: Digest) async throws -> User?

    /// Users by uid (byte order): those after `uid` when given, at most `limit` when given.
    func users(after uid: String?, limit: Int?) async throws -> [User]

    /// Grants or withdraws the admin role of `uid`; `nil` when there is no such user.
    func setAdmin(of uid: String, _ isAdmin: Bool) async throws -> User?

    /// Deletes `uid` with its tokens, claims and upload sessions (a user of the same uid made
    /// later cannot finish them); its objects and spots stay. Returns `false` when there is
    /// no such user.
    func deleteUser(_ uid: String) async throws -> Bool

    /// Deletes every token of `uid` and records the time, so that ID tokens issued before it
    /// are refused; its objects stay. Returns `false` when there is no such user.
    func revokeTokens(of uid: String) async throws -> Bool

    /// User `uid` with its claims, or `nil`.
    func user(uid: String) async throws -> User?

    /// Records that `uid` signed in with an ID token of `provider` at `time`: creates the
    /// user (without tokens of its own) when new, else sets its provider and last sign-in.
    func recordSignIn(uid: String, provider: String, at time: Date) async throws -> User
}

extension UserCatalog {
    /// All users, by uid.
    public func users() async throws -> [User] { try await users(after: nil, limit: nil) }
}

import Foundation
import SpotCore

/// A console session: its secret (the cookie's value, shown only now) and when it ends.
public struct BrowserSession: Sendable {
    public var secret: String
    public var expiresAt: Date
}

/// Console sessions and the one-time sign-in links that start them.
extension StorageService {
    /// How long a console session lives (seconds); signing in again makes a new one.
    public static let sessionLifetime: TimeInterval = 7 * 24 * 3600
    /// How long a sign-in link printed by `spotstore users login-link` may be used (seconds).
    public static let signInLinkLifetime: TimeInterval = 15 * 60

    /// A new console session of `user` (signed in some other way), live for `sessionLifetime`.
    public func startSession(for user: User) async throws -> BrowserSession {
        let now = configuration.now()
        let session = BrowserSession(secret: Tokens.generate(prefix: "sss_"), expiresAt: now + Self.sessionLifetime)
        guard try await catalog.addSession(Tokens.digest(of: session.secret), of: user.uid, createdAt: now, expiresAt: session.expiresAt) else {
            throw Self.noSuchUser(user.uid)
        }
        return session
    }

    /// The user of the console session `secret`, with its claims.
    /// - Throws: `.unauthenticated` when the session is unknown, ended, expired, or its user
    ///   was revoked or deleted since it began.
    public func user(session secret: String) async throws -> User {
        guard let user = try await catalog.user(sessionDigest: Tokens.digest(of: secret), at: configuration.now()) else {
            throw SpotError(.unauthenticated, "the console session has ended (signed out, expired, or its user was revoked); sign in again")
        }
        return user
    }

    /// Ends the console session `secret` on every server of the store; one ended before is no error.
    public func endSession(_ secret: String) async throws {
        _ = try await catalog.endSession(Tokens.digest(of: secret))
    }

    /// A one-time sign-in link's secret for `uid`, usable once within `signInLinkLifetime`.
    /// - Throws: `.notFound` when there is no such user.
    public func makeSignInLink(for uid: String) async throws -> (secret: String, expiresAt: Date) {
        let now = configuration.now()
        let secret = Tokens.generate(prefix: "ssl_"), expiresAt = now + Self.signInLinkLifetime
        guard try await catalog.addSignInLink(Tokens.digest(of: secret), for: uid, createdAt: now, expiresAt: expiresAt) else {
            throw Self.noSuchUser(uid)
        }
        return (secret, expiresAt)
    }

    /// Uses up the sign-in link `secret` and starts a console session of its user.
    /// - Throws: `.unauthenticated` when the link was used before, expired, or is unknown,
    ///   or its user was revoked since it was made; `.notFound` when its user was deleted
    ///   in the instant between.
    public func signIn(link secret: String) async throws -> (user: User, session: BrowserSession) {
        let now = configuration.now()
        guard let uid = try await catalog.useSignInLink(Tokens.digest(of: secret), at: now) else {
            throw SpotError(.unauthenticated, "this sign-in link was used already, has expired, or is not one; ask for a new one (spotstore users login-link UID)")
        }
        guard let user = try await catalog.user(uid: uid) else { throw Self.noSuchUser(uid) }
        return (user, try await startSession(for: user))
    }
}

import Foundation

/// Who a verified ID token (Firebase Auth, OpenID Connect) says signed in.
public struct VerifiedIdentity: Sendable, Equatable {
    /// The token's `sub`.
    public var uid: String
    /// The name of the provider whose keys signed it (`firebase:PROJECT`, or as configured).
    public var provider: String
    /// `iat`: a token issued before its user's revocation is refused.
    public var issuedAt: Date
    /// `exp`.
    public var expiresAt: Date
    /// Every claim of the token, for the rules (`request.auth.token.*`).
    public var claims: [String: ClaimValue]

    public init(uid: String, provider: String, issuedAt: Date, expiresAt: Date, claims: [String: ClaimValue]) {
        self.uid = uid
        self.provider = provider
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.claims = claims
    }
}

/// Verifies ID tokens (JWTs) signed by the identity providers a server trusts.
public protocol IdentityVerifier: Sendable {
    /// The identity in `token`.
    /// - Throws: `.unauthenticated` naming why the token is refused (never echoing it);
    ///   `.unavailable` when its provider's keys cannot be had.
    func verify(_ token: String) async throws -> VerifiedIdentity
}

/// Whether `token` has the shape of a JWT (three dot-separated parts) rather than one of
/// SpotStore's own opaque tokens.
public func looksLikeJWT(_ token: String) -> Bool {
    token.utf8.lazy.filter { $0 == UInt8(ascii: ".") }.count == 2
}

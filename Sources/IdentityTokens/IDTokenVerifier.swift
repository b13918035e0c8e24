import Crypto
import Foundation
import JWTKit
import Logging
import SpotCore
import Synchronization

/// Verifies ID tokens of the configured providers with jwt-kit: the signature with the
/// provider's published key named by `kid` (RS256/384/512, PS256/384/512, ES256/384/512,
/// as the key's type and declared algorithm allow), then `iss` and `aud` exactly, `exp`,
/// `nbf` and `iat` with at most `leeway` of clock skew, and `sub` as the uid when `UnicodeIdentity` accepts it.
/// Verified tokens are kept by digest until they expire, so a repeated request does not pay
/// for the signature again. With `acceptsUnsigned` (the Firebase emulator's tokens, for
/// local development) tokens with `alg: none` pass without a signature.
public final class IDTokenVerifier: IdentityVerifier {
    /// Clock skew allowed on `exp`, `nbf` and `iat`.
    public static let leeway: TimeInterval = 60
    /// Verified tokens kept at most.
    static let keptLimit = 10_000

    private let providers: [String: ProviderKeys]
    private let acceptsUnsigned: Bool
    private let now: @Sendable () -> Date
    private let verified = Mutex<[SpotCore.Digest: VerifiedIdentity]>([:])

    /// - Parameters:
    ///   - providers: the trusted providers (see `IdentityProvider.validate`).
    ///   - acceptsUnsigned: accept `alg: none` tokens (the emulators'); never in production.
    public init(
        providers: [IdentityProvider], acceptsUnsigned: Bool = false, logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws(SpotError) {
        try IdentityProvider.validate(providers)
        self.providers = Dictionary(uniqueKeysWithValues: providers.map { ($0.issuer, ProviderKeys(provider: $0, logger: logger, now: now)) })
        self.acceptsUnsigned = acceptsUnsigned
        self.now = now
    }

    public func verify(_ token: String) async throws -> VerifiedIdentity {
        let digest = SpotCore.Digest(bytes: Array(SHA256.hash(data: Array(token.utf8))))
        let time = now()
        if let identity = verified.withLock({ $0[digest] }), identity.expiresAt.addingTimeInterval(Self.leeway) > time {
            return identity
        }
        let identity = try await verifyAnew(token, at: time)
        verified.withLock { kept in
            if kept.count >= Self.keptLimit { kept = kept.filter { $0.value.expiresAt.addingTimeInterval(Self.leeway) > time } }
            if kept.count >= Self.keptLimit { kept.remove(at: kept.startIndex) }  // all live: make room for one
            kept[digest] = identity
        }
        return identity
    }

    private func verifyAnew(_ token: String, at time: Date) async throws -> VerifiedIdentity {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Self.jsonObject(parts[0]), let payload = Self.jsonObject(parts[1]) else {
            throw Self.refusal("it is malformed (a JWT is three base64url parts: header.payload.signature)")
        }
        guard let algorithm = header["alg"]?.string else { throw Self.refusal("its header names no algorithm (alg)") }
        guard case .string(let issuer)? = payload["iss"], let keys = providers[issuer] else {
            throw Self.refusal("its issuer (iss) is not one this server accepts")
        }
        let provider = keys.provider
        if algorithm == "none" {
            guard acceptsUnsigned, parts[2].isEmpty else {
                throw Self.refusal("it is unsigned (alg none); only a server started with --auth-emulator accepts those")
            }
        } else {
            try await checkSignature(token, algorithm: algorithm, kid: header["kid"]?.string, keys: keys)
        }
        return try Self.identity(from: payload, of: provider, at: time)
    }

    /// Refuses HMAC and unknown algorithms, unknown key ids and keys of another type or
    /// declared algorithm (algorithm confusion), then has jwt-kit check the signature.
    private func checkSignature(_ token: String, algorithm: String, kid: String?, keys: ProviderKeys) async throws {
        if algorithm.hasPrefix("HS") {
            throw Self.refusal("it is signed with a shared secret (\(Self.printable(algorithm))); only public-key signatures (RS256, ES256…) are accepted")
        }
        guard let family = Self.keyType(of: algorithm) else {
            throw Self.refusal("its algorithm \(Self.printable(algorithm)) is not accepted (RS256/384/512, PS256/384/512, ES256/384/512)")
        }
        guard let kid else { throw Self.refusal("its header names no key (kid)") }
        guard let (collection, key) = try await keys.key(kid) else {
            throw Self.refusal("its key id \(Self.printable(kid)) is not among the signing keys of \(keys.provider.name)")
        }
        guard key.type == family, key.algorithm == algorithm else {
            throw Self.refusal("it claims \(algorithm) but key \(Self.printable(kid)) is a \(key.algorithm) key")
        }
        do {
            _ = try await collection.verify(token, as: SignedClaims.self)
        } catch {
            throw Self.refusal("its signature does not verify with key \(Self.printable(kid)) of \(keys.provider.name)")
        }
    }

    /// The identity in a verified token's claims, once its audience, times and subject pass.
    static func identity(from claims: [String: ClaimValue], of provider: IdentityProvider, at time: Date) throws(SpotError) -> VerifiedIdentity {
        let audiences: [String] = switch claims["aud"] {
        case .string(let audience)?: [audience]
        case .list(let list)?: list.compactMap(\.string)
        default: []
        }
        guard audiences.contains(provider.audience) else {
            throw refusal("its audience (aud) is not \(provider.audience)")
        }
        // Several audiences: the token must have been issued to us (OpenID Connect's azp).
        guard audiences.count == 1 || claims["azp"]?.string == provider.audience else {
            throw refusal("it has several audiences and its authorized party (azp) is not \(provider.audience)")
        }
        guard let expiry = claims["exp"]?.seconds.map(Date.init(timeIntervalSince1970:)) else {
            throw refusal("it has no expiry (exp)")
        }
        guard expiry.addingTimeInterval(leeway) > time else {
            throw refusal("it expired at \(expiry.formatted(.iso8601)); sign in again for a fresh one")
        }
        if let notBefore = claims["nbf"]?.seconds.map(Date.init(timeIntervalSince1970:)), notBefore.addingTimeInterval(-leeway) > time {
            throw refusal("it is not valid before \(notBefore.formatted(.iso8601))")
        }
        guard let issuedAt = claims["iat"]?.seconds.map(Date.init(timeIntervalSince1970:)) else {
            throw refusal("it has no issue time (iat)")
        }
        guard issuedAt.addingTimeInterval(-leeway) <= time else {
            throw refusal("it was issued in the future (\(issuedAt.formatted(.iso8601)))")
        }
        guard let uid = claims["sub"]?.string else { throw refusal("it has no subject (sub)") }
        if let problem = UnicodeIdentity.problem(withUID: uid) { throw refusal("its subject (sub) cannot be a uid: \(problem)") }
        return VerifiedIdentity(uid: uid, provider: provider.name, issuedAt: issuedAt, expiresAt: expiry, claims: claims)
    }

    /// `RSA` for RS*/PS* algorithms, `EC` for ES*, `nil` for any other.
    static func keyType(of algorithm: String) -> String? {
        switch algorithm {
        case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512": "RSA"
        case "ES256", "ES384", "ES512": "EC"
        default: nil
        }
    }

    static func refusal(_ reason: String) -> SpotError {
        SpotError(.unauthenticated, "the ID token is refused: \(reason)")
    }

    /// `text` quoted for a message when short and printable, else a placeholder: a header
    /// field is the sender's, and is never echoed at length.
    static func printable(_ text: String) -> String {
        text.utf8.count <= 64 && text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F })
            ? "'\(text)'" : "(unprintable)"
    }

    /// A base64url part decoded as a JSON object, or `nil`.
    static func jsonObject(_ part: Substring) -> [String: ClaimValue]? {
        guard let text = Base64URL.decode(String(part)) else { return nil }
        return try? JSONDecoder().decode([String: ClaimValue].self, from: Data(text.utf8))
    }
}

/// The payload as jwt-kit hands it over after checking the signature; the claims are
/// checked by `IDTokenVerifier.identity`.
private struct SignedClaims: JWTPayload {
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

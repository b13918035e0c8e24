import _CryptoExtras
import Crypto
import Foundation
import Hummingbird
import IdentityTokens
import JWTKit
import Logging
import NIOCore
import SpotCore
import SpotService
import Synchronization
import X509

/// An identity provider made for a test: real RSA and P-256 keys, ID tokens signed with
/// them by jwt-kit, and its keys published as a JWKS by a real HTTP server on 127.0.0.1
/// (`serve`), which can be taken down and can rotate keys.
public final class TestIssuer: Sendable {
    public let issuer: String
    public let audience: String
    /// The keys by kid: `rsa-1` and `ec-1` at first.
    private let keys = Mutex<[String: Key]>([:])
    /// Which kids the JWKS publishes.
    private let published = Mutex<[String]>([])
    private let state = Mutex<(down: Bool, fetches: Int)>((false, 0))
    private let declaring = Mutex(true)

    /// Whether the JWKS names each key's `alg` (some providers' keys have none).
    public func setDeclaresAlgorithms(_ declares: Bool) { declaring.withLock { $0 = declares } }

    public enum Key: Sendable {
        case rsa(_RSA.Signing.PrivateKey)
        case ec(ES256PrivateKey)
    }

    public init(issuer: String = "https://issuer.test/realms/spots", audience: String = "spotstore-app") throws {
        self.issuer = issuer
        self.audience = audience
        try addKey("rsa-1", rsa: true)
        try addKey("ec-1", rsa: false)
    }

    /// Makes key `kid` (RSA 2048 or P-256) and publishes it.
    public func addKey(_ kid: String, rsa: Bool) throws {
        let key: Key = rsa ? .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048)) : .ec(ES256PrivateKey())
        keys.withLock { $0[kid] = key }
        published.withLock { $0.append(kid) }
    }

    /// Stops publishing key `kid` (its tokens can still be made).
    public func unpublish(_ kid: String) { published.withLock { $0.removeAll { $0 == kid } } }

    /// Whether the key server answers 503.
    public func setDown(_ down: Bool) { state.withLock { $0.down = down } }

    /// How many times the JWKS was fetched.
    public var fetches: Int { state.withLock { $0.fetches } }

    /// The standard claims of a token for `uid` issued now and valid for an hour.
    public func claims(_ uid: String = "user-1", issuedAt: Date = Date()) -> [String: ClaimValue] {
        [
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(uid),
            "iat": .int(Int64(issuedAt.timeIntervalSince1970)), "exp": .int(Int64(issuedAt.timeIntervalSince1970) + 3600),
        ]
    }

    /// A token with `claims` signed by key `kid` (RS256 or ES256 as the key is).
    public func token(_ claims: [String: ClaimValue], kid: String = "rsa-1") async throws -> String {
        let keys = JWTKeyCollection()
        switch self.keys.withLock({ $0[kid] }) {
        case .rsa(let key)?: await keys.add(rsa: try Insecure.RSA.PrivateKey(backing: key), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        case .ec(let key)?: await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        case nil: preconditionFailure("no key \(kid)")
        }
        return try await keys.sign(Claims(claims: claims), kid: JWKIdentifier(string: kid))
    }

    /// This issuer as a provider named `name` whose keys are at `url`.
    public func provider(named name: String = "keycloak", keys url: String) -> IdentityProvider {
        IdentityProvider(name: name, issuer: issuer, audience: audience, keys: url)
    }

    /// `service` accepting this issuer's ID tokens, its keys at `url`.
    public func accepted(by service: StorageService, keys url: String) throws -> StorageService {
        var service = service
        service.identities = try IDTokenVerifier(providers: [provider(keys: url)], logger: Logger(label: "test"))
        return service
    }

    /// A token signed with HMAC-SHA256 whose secret is the RSA key's public PEM: what an
    /// algorithm-confusion attack sends.
    public func hmacToken(_ claims: [String: ClaimValue], kid: String = "rsa-1") async throws -> String {
        guard case .rsa(let key)? = keys.withLock({ $0[kid] }) else { preconditionFailure("no RSA key \(kid)") }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key.publicKey.pemRepresentation), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        return try await keys.sign(Claims(claims: claims), kid: JWKIdentifier(string: kid))
    }

    /// An unsigned token (`alg: none`, empty signature), as the Firebase emulator makes them.
    public static func unsignedToken(_ claims: [String: ClaimValue]) throws -> String {
        base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + base64URL(try JSONEncoder().encode(claims)) + "."
    }

    /// The published keys as a JWKS.
    public func jwks() -> String {
        let kids = published.withLock { $0 }
        let declares = declaring.withLock { $0 }
        let entries: [[String: String]] = kids.compactMap { kid -> [String: String]? in
            switch keys.withLock({ $0[kid] }) {
            case .rsa(let key)?:
                guard let (n, e) = try? Insecure.RSA.PrivateKey(backing: key).publicKey.getKeyPrimitives() else { return nil }
                return ["kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig", "n": Self.base64URL(n), "e": Self.base64URL(e)]
            case .ec(let key)?:
                guard let (x, y) = key.publicKey.parameters else { return nil }
                return ["kty": "EC", "kid": kid, "alg": "ES256", "use": "sig", "crv": "P-256", "x": x, "y": y]
            case nil:
                return nil
            }
        }.map { declares ? $0 : $0.filter { $0.key != "alg" } }
        let data = try! JSONSerialization.data(withJSONObject: ["keys": entries])
        return String(decoding: data, as: UTF8.self)
    }

    /// The published RSA keys as Google publishes Firebase's: `{kid: PEM certificate}`.
    public func certificatesJSON() throws -> String {
        var certificates: [String: String] = [:]
        for kid in published.withLock({ $0 }) {
            guard case .rsa(let key)? = keys.withLock({ $0[kid] }) else { continue }
            let privateKey = Certificate.PrivateKey(key)
            let name = try DistinguishedName { CommonName("securetoken.system.gserviceaccount.com") }
            let certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: privateKey.publicKey,
                notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(86400),
                issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption, extensions: Certificate.Extensions(),
                issuerPrivateKey: privateKey)
            certificates[kid] = try certificate.serializeAsPEM().pemString
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: certificates), as: UTF8.self)
    }

    public static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Serves the JWKS at `http://127.0.0.1:PORT/jwks` (`Cache-Control: max-age=maxAge`)
    /// while `body` runs, and passes it the URL.
    public func serve<T: Sendable>(maxAge: Int = 300, _ body: @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        router.get("jwks") { _, _ -> Response in
            let down = self.state.withLock { state in
                state.fetches += 1
                return state.down
            }
            if down { return Response(status: .serviceUnavailable) }
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=\(maxAge)"],
                body: .init(byteBuffer: ByteBuffer(string: self.jwks())))
        }
        let ports = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { ports.continuation.yield($0.localAddress?.port ?? 0) })
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await app.runService(); return nil }
            var iterator = ports.stream.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            let result = try await body("http://127.0.0.1:\(port)/jwks")
            group.cancelAll()
            return result
        }
    }
}

/// Claims as a jwt-kit payload, encoded as they are.
private struct Claims: JWTPayload {
    var claims: [String: ClaimValue]
    func encode(to encoder: any Encoder) throws { try claims.encode(to: encoder) }
    init(claims: [String: ClaimValue]) { self.claims = claims }
    init(from decoder: any Decoder) throws { claims = try [String: ClaimValue](from: decoder) }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

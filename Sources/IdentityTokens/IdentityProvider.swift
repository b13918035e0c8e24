import Foundation
import SpotCore

/// An identity provider whose ID tokens a server accepts: tokens must carry exactly its
/// `issuer` and `audience`, and be signed by one of the keys at `keys`.
public struct IdentityProvider: Sendable, Equatable, Codable {
    /// How users of this provider are recorded (`provider` in `users list`).
    public var name: String
    /// The exact `iss` of its tokens.
    public var issuer: String
    /// The exact `aud` (or one of the `aud` list) of its tokens.
    public var audience: String
    /// Where its public keys are: an `http(s)://` URL of a JWKS or of Google's x509
    /// certificate JSON (`{kid: PEM}`), or a file holding either.
    public var keys: String

    public init(name: String, issuer: String, audience: String, keys: String) {
        self.name = name
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
    }

    /// Where Google publishes the keys of Firebase Auth ID tokens (x509 certificates).
    public static let firebaseKeysURL = "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"

    /// Firebase Auth of project `id`: issuer `https://securetoken.google.com/ID`, audience
    /// `ID`, Google's keys (or `keys`, a URL or file, to work offline).
    public static func firebase(project id: String, keys: String? = nil) -> IdentityProvider {
        IdentityProvider(
            name: "firebase:\(id)", issuer: "https://securetoken.google.com/\(id)", audience: id,
            keys: keys ?? firebaseKeysURL)
    }

    /// Whether `keys` is fetched over HTTP rather than read from a file.
    var keysAreRemote: Bool { keys.hasPrefix("https://") || keys.hasPrefix("http://") }

    /// The providers of an `--auth-config` file: `{"providers": [{"name", "issuer",
    /// "audience", "keys"}, …]}` (`name` defaults to the issuer).
    /// - Throws: `.badRequest` saying what is wrong with the file.
    public static func providers(configFile path: String) throws -> [IdentityProvider] {
        struct File: Decodable {
            struct Entry: Decodable {
                var name: String?
                var issuer: String
                var audience: String
                var keys: String
            }
            var providers: [Entry]
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw SpotError(.badRequest, "cannot read the auth config \(path): \(error.localizedDescription)")
        }
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: data) } catch {
            throw SpotError(.badRequest, #"the auth config \#(path) must be JSON like {"providers": [{"name": "keycloak", "issuer": "https://…", "audience": "spotstore", "keys": "https://…/certs"}]}"#)
        }
        let providers = file.providers.map { IdentityProvider(name: $0.name ?? $0.issuer, issuer: $0.issuer, audience: $0.audience, keys: $0.keys) }
        try validate(providers)
        return providers
    }

    /// Refuses an empty list, empty fields and two providers with one issuer.
    public static func validate(_ providers: [IdentityProvider]) throws(SpotError) {
        guard !providers.isEmpty else { throw SpotError(.badRequest, "no identity provider is configured") }
        var issuers = Set<String>(), names = Set<String>()
        for provider in providers {
            guard !provider.issuer.isEmpty, !provider.audience.isEmpty, !provider.keys.isEmpty, !provider.name.isEmpty else {
                throw SpotError(.badRequest, "identity provider '\(provider.name)' needs a name, an issuer, an audience and keys")
            }
            guard issuers.insert(provider.issuer).inserted else {
                throw SpotError(.badRequest, "two identity providers have the issuer \(provider.issuer)")
            }
            guard names.insert(provider.name).inserted else {
                throw SpotError(.badRequest, "two identity providers are named \(provider.name)")
            }
            // Keys over plain HTTP could be swapped by anyone on the way, except on this machine.
            if provider.keys.hasPrefix("http://"), !["127.0.0.1", "localhost", "::1"].contains(URL(string: provider.keys)?.host ?? "") {
                throw SpotError(.badRequest, "the keys of \(provider.name) must come over https:// (or from a file), not \(provider.keys)")
            }
        }
    }
}

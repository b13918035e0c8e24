import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOFoundationCompat
import SpotCore

/// The public keys of one identity provider, fetched from its JWKS or x509 certificate
/// JSON and kept as long as its `Cache-Control: max-age` says (an hour without one). An
/// unknown key id fetches them again, at most once a minute; when the key server is down
/// the last good keys are kept.
actor ProviderKeys {
    /// One key as the provider published it.
    struct Key: Sendable {
        /// `RSA` or `EC`.
        var type: String
        /// The algorithm the key declares (`alg`), or the one of its type and curve.
        var algorithm: String
    }

    /// The least time between two fetches caused by unknown key ids.
    static let refetchInterval: TimeInterval = 60
    /// How long keys are kept when their answer says nothing.
    static let defaultLifetime: TimeInterval = 3600

    let provider: IdentityProvider
    private let logger: Logger
    private let now: @Sendable () -> Date
    private(set) var collection = JWTKeyCollection()
    private(set) var keys: [String: Key] = [:]
    private var expiresAt = Date.distantPast
    private var lastAttempt: Date?
    private var lastFailure: String?
    /// The fetch under way: callers arriving meanwhile wait for it instead of fetching too.
    private var refreshing: Task<Void, Never>?

    init(provider: IdentityProvider, logger: Logger, now: @escaping @Sendable () -> Date) {
        self.provider = provider
        self.logger = logger
        self.now = now
    }

    /// The collection holding key `kid` and what the provider says of it, fetching the keys
    /// when they are stale or (at most once a minute) when `kid` is unknown; `nil` when the
    /// provider has no such key.
    /// - Throws: `.unavailable` when there are no keys at all and they cannot be fetched.
    func key(_ kid: String) async throws -> (collection: JWTKeyCollection, key: Key)? {
        let time = now()
        let stale = time >= expiresAt
        let mayRefetch = lastAttempt.map { time.timeIntervalSince($0) >= Self.refetchInterval } ?? true
        if stale || (keys[kid] == nil && mayRefetch) {
            if let refreshing {
                await refreshing.value
            } else {
                let task = Task { await self.refresh(at: time) }
                refreshing = task
                await task.value
                refreshing = nil
            }
        }
        if keys.isEmpty, let lastFailure {
            throw SpotError(.unavailable, "the signing keys of \(provider.name) cannot be had (\(lastFailure)); try again later")
        }
        return keys[kid].map { (collection, $0) }
    }

    /// Fetches the keys; on failure keeps the ones there are and logs why.
    private func refresh(at time: Date) async {
        lastAttempt = time
        do {
            let (body, lifetime) = try await fetch()
            let (collection, keys) = try await Self.parse(body)
            self.collection = collection
            self.keys = keys
            expiresAt = time.addingTimeInterval(lifetime)
            lastFailure = nil
            logger.info("signing keys loaded", metadata: ["provider": "\(provider.name)", "keys": "\(keys.keys.sorted().joined(separator: ","))"])
        } catch {
            lastFailure = "\(error)"
            // Keep the last good keys, and ask again no sooner than an unknown key id would.
            expiresAt = time.addingTimeInterval(Self.refetchInterval)
            logger.warning("cannot load signing keys; keeping the last good ones", metadata: [
                "provider": "\(provider.name)", "keys": "\(keys.count)", "error": "\(error)",
            ])
        }
    }

    /// The published keys and how long they may be kept.
    private func fetch() async throws -> (Data, TimeInterval) {
        guard provider.keysAreRemote else {
            return (try Data(contentsOf: URL(fileURLWithPath: provider.keys)), Self.defaultLifetime)
        }
        var request = HTTPClientRequest(url: provider.keys)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(5))
        guard response.status == .ok else {
            throw SpotError(.unavailable, "\(provider.keys) answered \(response.status.code)")
        }
        let body = try await response.body.collect(upTo: 1 << 20)
        // Kept at least a minute (max-age=0 would mean a fetch per request) and at most a day.
        let lifetime = min(max(response.headers.first(name: "Cache-Control").flatMap(Self.maxAge) ?? Self.defaultLifetime, 60), 86400)
        return (Data(buffer: body), lifetime)
    }

    /// The algorithm of a JWK that declares none: RS256 for RSA, ES256/384/512 by curve
    /// for EC; `nil` for other key types.
    static func defaultAlgorithm(type: String, curve: String?) -> String? {
        switch (type, curve) {
        case ("RSA", _): "RS256"
        case ("EC", "P-256"?): "ES256"
        case ("EC", "P-384"?): "ES384"
        case ("EC", "P-521"?): "ES512"
        default: nil
        }
    }

    /// `max-age` of a `Cache-Control` value, in seconds.
    static func maxAge(_ cacheControl: String) -> TimeInterval? {
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = Int(parts[1]), seconds >= 0 {
                return TimeInterval(seconds)
            }
        }
        return nil
    }

    /// Keys from a JWKS (`{"keys": [...]}`: signing keys of type RSA or EC with a `kid`;
    /// others are skipped) or Google's certificate JSON (`{kid: PEM certificate}`: RSA).
    static func parse(_ body: Data) async throws -> (JWTKeyCollection, [String: Key]) {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw SpotError(.unavailable, "the keys are not a JSON object (a JWKS or x509 certificate JSON)")
        }
        let collection = JWTKeyCollection()
        var keys: [String: Key] = [:]
        if let entries = object["keys"] as? [Any] {
            for entry in entries {
                guard var fields = entry as? [String: Any], fields["use"] as? String != "enc",
                      let type = fields["kty"] as? String, let kid = fields["kid"] as? String,
                      let algorithm = fields["alg"] as? String ?? defaultAlgorithm(type: type, curve: fields["crv"] as? String)
                else { continue }
                // A key always has its algorithm, so jwt-kit never takes one from a token's header.
                fields["alg"] = algorithm
                guard let jwk = try? JSONDecoder().decode(JWK.self, from: JSONSerialization.data(withJSONObject: fields)),
                      (try? await collection.add(jwk: jwk)) != nil
                else { continue }
                keys[kid] = Key(type: type, algorithm: algorithm)
            }
        } else {
            for case let (kid, pem as String) in object {
                guard let key = try? Insecure.RSA.PublicKey(certificatePEM: pem) else { continue }
                await collection.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
                keys[kid] = Key(type: "RSA", algorithm: "RS256")
            }
        }
        guard !keys.isEmpty else { throw SpotError(.unavailable, "no usable signing key (RSA or EC with a kid) among the keys") }
        return (collection, keys)
    }
}

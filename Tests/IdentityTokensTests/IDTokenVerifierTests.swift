import Foundation
import IdentityTokens
import Logging
import SpotCore
import Testing
import TestSupport

/// ID tokens signed with real RSA and P-256 keys, their JWKS served by a real HTTP server:
/// what is accepted, every refusal, key rotation and a key server that goes down.
@Suite struct IDTokenVerifierTests {
    let issuer: TestIssuer
    let clock = TestClock()

    init() throws { issuer = try TestIssuer() }

    func verifier(keys url: String, acceptsUnsigned: Bool = false) throws -> IDTokenVerifier {
        let clock = self.clock
        return try IDTokenVerifier(
            providers: [issuer.provider(keys: url)],
            acceptsUnsigned: acceptsUnsigned, logger: Logger(label: "test"), now: { clock.now })
    }

    /// The refusal of `token`, checked to name `reason` and not to echo the token.
    func refusal(_ verifier: IDTokenVerifier, _ token: String, _ reason: String) async throws {
        let error = try await #require(throws: SpotError.self) { try await verifier.verify(token) }
        #expect(error.kind == .unauthenticated, "\(error)")
        #expect(error.message.contains(reason), "\(error.message) should say \(reason)")
        for part in token.split(separator: ".") where part.count > 8 {
            #expect(!error.message.contains(part), "the message echoes the token: \(error.message)")
        }
    }

    @Test func rs256AndES256TokensGiveTheirIdentityAndClaims() async throws {
        try await issuer.serve { url in
            let verifier = try verifier(keys: url)
            var claims = issuer.claims("alice", issuedAt: clock.now)
            claims["email"] = .string("alice@example.com")
            claims["email_verified"] = .bool(true)
            claims["firebase"] = .map(["sign_in_provider": .string("password")])
            let identity = try await verifier.verify(try await issuer.token(claims, kid: "rsa-1"))
            #expect(identity.uid == "alice" && identity.provider == "keycloak")
            #expect(identity.claims["email_verified"] == .bool(true))
            #expect(identity.claims["firebase"] == .map(["sign_in_provider": .string("password")]))
            #expect(try await verifier.verify(try await issuer.token(claims, kid: "ec-1")).uid == "alice")
            #expect(issuer.fetches == 1, "the keys are fetched once")
            // Stale keys, many requests at once: one fetch.
            clock.advance(by: 301)
            let tokens = try await (0..<8).asyncMap { try await issuer.token(issuer.claims("user-\($0)", issuedAt: clock.now), kid: "ec-1") }
            let uids = try await withThrowingTaskGroup(of: String.self) { group in
                for token in tokens { group.addTask { try await verifier.verify(token).uid } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(uids.count == 8)
            #expect(issuer.fetches == 2, "requests arriving while the keys are fetched wait for that fetch")
        }
    }

    @Test func everyKindOfBadTokenIsRefusedWithItsReason() async throws {
        let stranger = try TestIssuer(issuer: issuer.issuer, audience: issuer.audience)
        try await issuer.serve { url in
            let verifier = try verifier(keys: url)
            let now = clock.now
            let good = issuer.claims("bob", issuedAt: now)
            func with(_ key: String, _ value: ClaimValue?) -> [String: ClaimValue] {
                var claims = good
                claims[key] = value
                return claims
            }
            try await refusal(verifier, try await stranger.token(good, kid: "rsa-1"), "signature does not verify")
            try await refusal(verifier, try await stranger.token(good, kid: "ec-1"), "signature does not verify")
            try await refusal(verifier, try await issuer.token(good, kid: "rsa-1").dropLast(4) + "AAAA", "signature does not verify")
            try await stranger.addKey("other", rsa: true)
            try await refusal(verifier, try await stranger.token(good, kid: "other"), "key id 'other' is not among the signing keys")
            try await refusal(verifier, try TestIssuer.unsignedToken(good), "unsigned (alg none)")
            try await refusal(verifier, try await issuer.hmacToken(good), "shared secret ('HS256')")
            try await refusal(verifier, try await issuer.token(with("exp", .int(Int64(now.timeIntervalSince1970) - 61))), "expired at")
            try await refusal(verifier, try await issuer.token(with("nbf", .int(Int64(now.timeIntervalSince1970) + 120))), "not valid before")
            try await refusal(verifier, try await issuer.token(with("iat", .int(Int64(now.timeIntervalSince1970) + 120))), "issued in the future")
            try await refusal(verifier, try await issuer.token(with("iss", .string("https://evil.test"))), "issuer (iss) is not one")
            try await refusal(verifier, try await issuer.token(with("aud", .string("another-app"))), "audience (aud) is not spotstore-app")
            try await refusal(verifier, try await issuer.token(with("sub", nil)), "subject (sub)")
            try await refusal(verifier, try await issuer.token(with("sub", .string(String(repeating: "x", count: 129)))), "subject (sub)")
            try await refusal(verifier, try await issuer.token(with("sub", .string("bob\nadmin"))), "U+000A, which no identity needs")
            // Look-alikes of other users: another spelling of a name is never a second uid.
            try await refusal(verifier, try await issuer.token(with("sub", .string("\u{212A}ate"))), "not in Unicode normal form NFKC")
            try await refusal(verifier, try await issuer.token(with("sub", .string("jose\u{301}"))), "not in Unicode normal form NFKC")
            try await refusal(verifier, try await issuer.token(with("sub", .string("\u{FF2B}ate"))), "not in Unicode normal form NFKC")
            try await refusal(verifier, try await issuer.token(with("sub", .string("ka\u{200D}te"))), "U+200D, which no identity needs")
            try await refusal(verifier, try await issuer.token(with("sub", .string("\u{202E}etak"))), "U+202E, which no identity needs")
            try await refusal(verifier, try await issuer.token(with("sub", .string("kate "))), "U+0020, which no identity needs")
            try await refusal(verifier, try await issuer.token(with("sub", .string("ka\u{34F}te"))), "U+034F, which no identity needs")
            #expect(try await verifier.verify(try await issuer.token(with("sub", .string("jos\u{E9}")))).uid.unicodeScalars.count == 4)
            #expect(try await verifier.verify(try await issuer.token(with("sub", .string("google-oauth2|1234")))).uid == "google-oauth2|1234")
            try await refusal(verifier, try await issuer.token(with("exp", nil)), "no expiry")
            for malformed in ["a.b.c", "only-one-part", "x.y", "!!.??.--"] {
                try await refusal(verifier, malformed, "malformed")
            }
            // Within the 60 s of skew: accepted.
            let skewed = with("exp", .int(Int64(now.timeIntervalSince1970) - 30))
            #expect(try await verifier.verify(try await issuer.token(skewed)).uid == "bob")
            var shared = with("aud", .list([.string("x"), .string(issuer.audience)]))
            try await refusal(verifier, try await issuer.token(shared), "authorized party (azp)")
            shared["azp"] = .string(issuer.audience)
            #expect(try await verifier.verify(try await issuer.token(shared)).uid == "bob")
        }
    }

    /// Keys that declare no `alg` get the one of their type: a token claiming another
    /// algorithm for them is refused, and cannot change how later tokens are checked.
    @Test func keysWithoutAnAlgorithmKeepTheirTypesOne() async throws {
        issuer.setDeclaresAlgorithms(false)
        try await issuer.serve { url in
            let verifier = try verifier(keys: url)
            let good = try await issuer.token(issuer.claims("ines", issuedAt: clock.now), kid: "rsa-1")
            let parts = good.split(separator: ".")
            let pss = TestIssuer.base64URL(Data(#"{"alg":"PS256","kid":"rsa-1","typ":"JWT"}"#.utf8))
            try await refusal(verifier, "\(pss).\(parts[1]).\(parts[2])", "claims PS256 but key 'rsa-1' is a RS256 key")
            #expect(try await verifier.verify(good).uid == "ines")
            #expect(try await verifier.verify(try await issuer.token(issuer.claims("ines", issuedAt: clock.now), kid: "ec-1")).uid == "ines")
        }
        #expect(throws: SpotError(.badRequest, "the keys of x must come over https:// (or from a file), not http://keys.example.com/jwks")) {
            try IdentityProvider.validate([IdentityProvider(name: "x", issuer: "https://x", audience: "a", keys: "http://keys.example.com/jwks")])
        }
    }

    @Test func unsignedTokensPassOnlyWhenEmulatorTokensAreAccepted() async throws {
        try await issuer.serve { url in
            let token = try TestIssuer.unsignedToken(issuer.claims("emu", issuedAt: clock.now))
            #expect(try await verifier(keys: url, acceptsUnsigned: true).verify(token).uid == "emu")
            try await refusal(try verifier(keys: url), token, "--auth-emulator")
        }
    }

    @Test func rotatedKeysAreFetchedAtMostOnceAMinuteAndDroppedKeysRefused() async throws {
        try await issuer.serve { url in
            let verifier = try verifier(keys: url)
            _ = try await verifier.verify(try await issuer.token(issuer.claims("carol", issuedAt: clock.now), kid: "rsa-1"))
            try issuer.addKey("rsa-2", rsa: true)
            issuer.unpublish("rsa-1")
            let rotated = try await issuer.token(issuer.claims("carol", issuedAt: clock.now), kid: "rsa-2")
            try await refusal(verifier, rotated, "key id 'rsa-2' is not among")
            #expect(issuer.fetches == 1, "an unknown kid fetches again only a minute after the last fetch")
            clock.advance(by: 61)
            #expect(try await verifier.verify(rotated).uid == "carol")
            #expect(issuer.fetches == 2)
            let old = try await issuer.token(issuer.claims("carol", issuedAt: clock.now), kid: "rsa-1")
            try await refusal(verifier, old, "key id 'rsa-1' is not among")
        }
    }

    @Test func keysAreKeptAsCacheControlSaysAndTheLastGoodOnesWhenTheServerIsDown() async throws {
        try await issuer.serve(maxAge: 300) { url in
            let verifier = try verifier(keys: url)
            _ = try await verifier.verify(try await issuer.token(issuer.claims("dave", issuedAt: clock.now)))
            clock.advance(by: 200)
            _ = try await verifier.verify(try await issuer.token(issuer.claims("dave", issuedAt: clock.now)))
            #expect(issuer.fetches == 1, "max-age=300 keeps the keys")
            clock.advance(by: 101)
            issuer.setDown(true)
            #expect(try await verifier.verify(try await issuer.token(issuer.claims("dave", issuedAt: clock.now))).uid == "dave")
            #expect(issuer.fetches == 2, "stale keys were asked for again, and the last good ones kept")

            // A server that has never had the keys says so.
            let error = try await #require(throws: SpotError.self) {
                try await self.verifier(keys: url).verify(try await issuer.token(issuer.claims("dave", issuedAt: clock.now)))
            }
            #expect(error.kind == .unavailable && error.message.contains("signing keys of keycloak cannot be had"), "\(error)")
        }
    }

    @Test func firebaseTokensVerifyWithGoogleCertificatesNamedInAnAuthConfigFile() async throws {
        let firebase = try TestIssuer(issuer: "https://securetoken.google.com/spots-app", audience: "spots-app")
        let folder = NSTemporaryDirectory() + "auth-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(try firebase.certificatesJSON().utf8).write(to: URL(fileURLWithPath: folder + "/google.json"))
        try Data(issuer.jwks().utf8).write(to: URL(fileURLWithPath: folder + "/jwks.json"))
        let config = folder + "/auth.json"
        try Data("""
            {"providers": [{"name": "keycloak", "issuer": "\(issuer.issuer)", "audience": "\(issuer.audience)", "keys": "\(folder)/jwks.json"},
                           {"issuer": "https://securetoken.google.com/spots-app", "audience": "spots-app", "keys": "\(folder)/google.json"}]}
            """.utf8).write(to: URL(fileURLWithPath: config))
        let providers = try IdentityProvider.providers(configFile: config)
        #expect(providers.map(\.name) == ["keycloak", "https://securetoken.google.com/spots-app"])
        #expect(IdentityProvider.firebase(project: "spots-app").issuer == providers[1].issuer)
        let clock = self.clock
        let verifier = try IDTokenVerifier(providers: providers, logger: Logger(label: "test"), now: { clock.now })
        #expect(try await verifier.verify(try await firebase.token(firebase.claims("erin", issuedAt: clock.now))).uid == "erin")
        #expect(try await verifier.verify(try await issuer.token(issuer.claims("frank", issuedAt: clock.now), kid: "ec-1")).provider == "keycloak")

        try Data("{}".utf8).write(to: URL(fileURLWithPath: folder + "/bad.json"))
        let notJSONLike = SpotError(.badRequest, #"the auth config \#(folder)/bad.json must be JSON like {"providers": [{"name": "keycloak", "issuer": "https://…", "audience": "spotstore", "keys": "https://…/certs"}]}"#)
        #expect(throws: notJSONLike) { try IdentityProvider.providers(configFile: folder + "/bad.json") }
        #expect(throws: SpotError(.badRequest, "two identity providers have the issuer \(providers[0].issuer)")) {
            try IdentityProvider.validate([providers[0], providers[0]])
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

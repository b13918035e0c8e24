import Foundation
import Hummingbird
import HummingbirdTesting
import IdentityTokens
import Logging
import SpotCore
import SpotServer
import SpotService
import Testing
import TestSupport

/// ID tokens of a real issuer (keys made here, JWKS on a real local server) through a real
/// server: both header forms beside SpotStore's own tokens, users recorded on first sight,
/// claims in rules decisions, revocation on every instance.
extension HTTPTests {
    func app(_ service: StorageService) -> some ApplicationProtocol {
        SpotServer.makeApplication(service: service, configuration: .init(host: "127.0.0.1", port: 0), logger: Logger(label: "test"))
    }

    @Test func idTokensSignInBesideOwnTokensAndTheirUsersAreRecorded() async throws {
        let store = try TestStore()
        let issuer = try TestIssuer()
        let (_, bob) = try await store.user("bob")
        try await issuer.serve { url in
            let service = try issuer.accepted(by: store.service, keys: url)
            let token = try await issuer.token(issuer.claims("auth0|alice"), kid: "ec-1")
            try await app(service).test(.router) { client in
                let photo = ByteBuffer(bytes: try fixture("photos/coffee.jpg"))
                try await client.execute(uri: "/v0/b/spots/o/cafe%2F1.jpg", method: .put, headers: [.authorization: "Firebase \(token)"], body: photo) { response in
                    let owner = try json(response)["owner"] as? String
                    #expect(response.status == .ok && owner == "auth0|alice")
                }
                try await client.execute(uri: "/v0/b/spots/o/cafe%2F1.jpg", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                    #expect(response.status == .ok)
                }
                // The spot is hers: SpotStore's own token of another user may read, not write.
                try await client.execute(uri: "/v0/b/spots/o/cafe%2F2.jpg", method: .put, headers: auth(bob), body: photo) { response in
                    #expect(response.status == .forbidden)
                }
                try await client.execute(uri: "/v0/b/spots/o/cafe%2F1.jpg", method: .get, headers: auth(bob)) { response in
                    #expect(response.status == .ok)
                }
                let forged = try await TestIssuer().token(issuer.claims("auth0|alice"))
                try await client.execute(uri: "/v0/b/spots/o/cafe%2F1.jpg", method: .get, headers: [.authorization: "Firebase \(forged)"]) { response in
                    let message = try errorMessage(response)
                    #expect(response.status == .unauthorized && message.contains("signature does not verify"), "\(message)")
                    #expect(response.headers[.wwwAuthenticate] == "Bearer")
                }
            }
            let users = try await store.service.catalog.users()
            let alice = try #require(users.first { $0.uid == "auth0|alice" })
            #expect(alice.provider == "keycloak" && alice.lastSignInAt != nil && alice.tokenCount == 0)
            #expect(try await store.service.catalog.spot(bucket: "spots", id: "cafe")?.owner == "auth0|alice")
        }
    }

    /// An app's ID token starts a console session; the session ends when the user's tokens
    /// are revoked, as the ID tokens issued before do.
    @Test func anIDTokenStartsAConsoleSessionThatARevocationEnds() async throws {
        let store = try TestStore()
        let issuer = try TestIssuer()
        try await issuer.serve { url in
            let service = try issuer.accepted(by: store.service, keys: url)
            let token = try await issuer.token(issuer.claims("auth0|alice"), kid: "ec-1")
            try await app(service).test(.router) { client in
                let cookie = try await client.execute(
                    uri: "/v0/session", method: .post, headers: Self.console.merging([.authorization: "Bearer \(token)"])
                ) { response in
                    #expect(response.status == .ok)
                    return try sessionCookie(response)
                }
                try await client.execute(uri: "/v0/session", method: .get, headers: [.cookie: cookie]) { response in
                    let user = try json(response)["user"] as? [String: Any]
                    #expect(user?["uid"] as? String == "auth0|alice")
                }
                try await service.revokeTokens(of: "auth0|alice")
                try await client.execute(uri: "/v0/session", method: .get, headers: [.cookie: cookie]) { response in
                    #expect(response.status == .unauthorized)
                }
            }
        }
    }

    /// One uid space: an ID token cannot become a user of SpotStore's own tokens, nor a
    /// user of another provider.
    @Test func noProviderTakesOverAnotherOnesUsers() async throws {
        let store = try TestStore()
        _ = try await store.user("bob")
        let first = try TestIssuer(), second = try TestIssuer(issuer: "https://other.test", audience: "other-app")
        try await first.serve { firstKeys in
            try await second.serve { secondKeys in
                var service = store.service
                service.identities = try IDTokenVerifier(
                    providers: [first.provider(named: "first", keys: firstKeys), second.provider(named: "second", keys: secondKeys)],
                    logger: Logger(label: "test"))
                let asBob = try await first.token(first.claims("bob"))
                let bobError = try await #require(throws: SpotError.self) { try await service.authenticate(token: asBob) }
                #expect(bobError.kind == .unauthenticated && bobError.message.contains("user of SpotStore's own tokens"), "\(bobError)")
                #expect(try await service.authenticate(token: try await first.token(first.claims("kim")))?.uid == "kim")
                let asKim = try await second.token(second.claims("kim"))
                let kimError = try await #require(throws: SpotError.self) { try await service.authenticate(token: asKim) }
                #expect(kimError.kind == .unauthenticated && kimError.message.contains("uid kim signs in through first, not second"), "\(kimError)")
            }
        }
    }

    @Test func aServerWithoutProvidersSaysSoForAnIDToken() async throws {
        let store = try TestStore()
        let token = try await TestIssuer().token(TestIssuer().claims())
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/cafe%2F1.jpg", method: .get, headers: auth(token)) { response in
                let message = try errorMessage(response)
                #expect(response.status == .unauthorized && message.contains("accepts no ID tokens"), "\(message)")
            }
        }
    }

    @Test func theTokensClaimsAndTheCatalogsClaimsDriveTheRules() async throws {
        let store = try TestStore(rules: """
            rules_version = '2';
            service firebase.storage {
              match /b/verified/o/{place}/{file} {
                allow read, write: if request.auth != null && request.auth.token.email_verified == true
                  && request.auth.token.firebase.sign_in_provider == 'google.com';
              }
              match /b/teams/o/{team}/{file} {
                allow read, write: if request.auth.token.team == team;
              }
            }
            """)
        let issuer = try TestIssuer()
        try await issuer.serve { url in
            let service = try issuer.accepted(by: store.service, keys: url)
            func token(_ uid: String, _ extra: [String: ClaimValue]) async throws -> String {
                try await issuer.token(issuer.claims(uid).merging(extra) { $1 })
            }
            let google: ClaimValue = .map(["sign_in_provider": .string("google.com")])
            let verified = try await token("gina", ["email_verified": .bool(true), "firebase": google])
            let unverified = try await token("hugo", ["email_verified": .bool(false), "firebase": google])
            let red = try await token("ines", ["team": .string("red")])
            let body = ByteBuffer(string: "notes")
            try await app(service).test(.router) { client in
                func put(_ uri: String, _ token: String) async throws -> HTTPResponse.Status {
                    try await client.execute(uri: uri, method: .put, headers: [.authorization: "Firebase \(token)"], body: body) { $0.status }
                }
                #expect(try await put("/v0/b/verified/o/a%2Fn.txt", verified) == .ok)
                #expect(try await put("/v0/b/verified/o/a%2Fn.txt", unverified) == .forbidden)
                #expect(try await put("/v0/b/teams/o/red%2Fn.txt", red) == .ok)
                #expect(try await put("/v0/b/teams/o/blue%2Fn.txt", red) == .forbidden)
                // The catalog's claims are layered over the token's.
                _ = try await store.service.updateClaims(of: "ines", ["team": "blue"])
                #expect(try await put("/v0/b/teams/o/blue%2Fn.txt", red) == .ok)
                #expect(try await put("/v0/b/teams/o/red%2Fn.txt", red) == .forbidden)
            }
        }
    }

    @Test func revokingAUserRefusesItsEarlierIDTokensOnEveryInstance() async throws {
        let store = try TestStore()
        let issuer = try TestIssuer()
        try await issuer.serve { url in
            let first = try issuer.accepted(by: store.service, keys: url)
            let second = try issuer.accepted(by: try store.otherInstance("second"), keys: url)
            let earlier = try await issuer.token(issuer.claims("jo", issuedAt: Date().addingTimeInterval(-10)))
            #expect(try await first.authenticate(token: earlier)?.uid == "jo")
            #expect(try await second.authenticate(token: earlier)?.uid == "jo")
            try await first.revokeTokens(of: "jo")
            for service in [first, second] {
                let error = try await #require(throws: SpotError.self) { try await service.authenticate(token: earlier) }
                #expect(error.kind == .unauthenticated && error.message.contains("issued before jo's tokens were revoked"), "\(error)")
            }
            let later = try await issuer.token(issuer.claims("jo", issuedAt: Date().addingTimeInterval(1)))
            #expect(try await second.authenticate(token: later)?.uid == "jo", "signing in again works")
        }
    }
}

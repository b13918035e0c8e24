import Access
import Catalogs
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IdentityTokens
import Logging
import SpotCore
import SpotService
import Testing
import TestSupport
@testable import SpotServer

/// Thumbnail answers given again without the router (`KeptThumbnails`), over a real
/// server: the same bytes and headers, and never once anything they depend on changed.
@Suite struct KeptThumbnailTests {
    static let thumbnail = "/v0/b/spots/o/fort-point%2Fgate.jpg?alt=thumbnail&size=256"

    /// A store holding alice's photo `fort-point/gate.jpg`, and her token.
    func storeWithPhoto(rules: String = RulesPolicy.defaultText) async throws -> (TestStore, User, String) {
        let store = try TestStore(rules: rules)
        let (alice, token) = try await store.user("alice")
        _ = try await store.service.upload(
            try ObjectPath(bucket: "spots", name: "fort-point/gate.jpg"), by: alice, contentType: nil, declaredSize: nil,
            body: body(try fixture("geotagged/san-francisco.jpg")))
        return (store, alice, token)
    }

    func app(
        _ service: StorageService, rules: any RulesRevision, configuration: ServerConfiguration = .init(host: "127.0.0.1", port: 0)
    ) -> some ApplicationProtocol {
        SpotServer.makeApplication(service: service, configuration: configuration, logger: Logger(label: "test"), rules: rules)
    }

    /// `spotstore_kept_thumbnail_answers_total` from `/metrics`.
    func keptAnswers(_ client: some TestClientProtocol) async throws -> Int {
        try await client.execute(uri: "/metrics", method: .get) { response in
            let line = String(buffer: response.body).split(separator: "\n").first { $0.hasPrefix("spotstore_kept_thumbnail_answers_total ") }
            return try #require(line.flatMap { Int($0.split(separator: " ")[1]) })
        }
    }

    /// GET of the 256 px thumbnail with `token`: status and body.
    func getThumbnail(_ client: some TestClientProtocol, token: String, headers: HTTPFields = [:]) async throws -> (HTTPResponse.Status, [UInt8]) {
        var headers = headers
        headers[.authorization] = "Bearer \(token)"
        return try await client.execute(uri: Self.thumbnail, method: .get, headers: headers) { ($0.status, Array(buffer: $0.body)) }
    }

    @Test func aRepeatedRequestGetsTheSameAnswerWithoutTheRouter() async throws {
        let (store, _, token) = try await storeWithPhoto()
        try await app(store.service, rules: store.rules).test(.live) { client in
            let headers: HTTPFields = [.authorization: "Bearer \(token)"]
            let first = try await client.execute(uri: Self.thumbnail, method: .get, headers: headers) { $0 }
            #expect(first.status == .ok)
            #expect(try await keptAnswers(client) == 0)
            let again = try await client.execute(uri: Self.thumbnail, method: .get, headers: headers + [.requestID: "again-1"]) { $0 }
            #expect(try await keptAnswers(client) == 1)
            #expect(again.status == .ok)
            #expect(again.body == first.body && jpegSize(Array(buffer: again.body))?.width == 256)
            for name in [HTTPField.Name.contentType, .eTag, .cacheControl, .contentLength, .server] {
                #expect(again.headers[name] != nil && again.headers[name] == first.headers[name], "\(name)")
            }
            #expect(again.headers[.requestID] == "again-1")
            let httpDate = DateFormatter()
            httpDate.locale = Locale(identifier: "en_US_POSIX")
            httpDate.timeZone = TimeZone(identifier: "GMT")
            httpDate.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let date = try #require(httpDate.date(from: again.headers[.date] ?? ""), "\(again.headers)")
            #expect(abs(date.timeIntervalSinceNow) < 60)
            // Counted like any answer of the route.
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            #expect(metrics.contains(#"spotstore_http_requests_total{method="GET",route="/v0/b/{bucket}/o/**",status="200"} 2"#), "\(metrics)")
            // What the router answers itself: If-None-Match (304), Origin (CORS) and HEAD.
            #expect(try await getThumbnail(client, token: token, headers: [.ifNoneMatch: first.headers[.eTag]!]).0 == .notModified)
            #expect(try await getThumbnail(client, token: token, headers: [.origin: "https://app.example.com"]).0 == .ok)
            try await client.execute(uri: Self.thumbnail, method: .head, headers: headers) { response in
                #expect(response.status == .ok && response.body.readableBytes == 0)
            }
            #expect(try await keptAnswers(client) == 1)
        }
    }

    @Test func aRevokedTokenOrADeletedObjectIsNotAnsweredFromKeptAnswers() async throws {
        let (store, alice, token) = try await storeWithPhoto()
        try await app(store.service, rules: store.rules).test(.live) { client in
            #expect(try await getThumbnail(client, token: token).0 == .ok)
            #expect(try await getThumbnail(client, token: token).0 == .ok)
            #expect(try await keptAnswers(client) == 1)
            // Revoked through a catalog connection of its own, as `spotstore users revoke` does.
            let other = try SQLiteCatalog(path: "\(store.root)/catalog.sqlite")
            #expect(try await other.revokeTokens(of: "alice"))
            #expect(try await getThumbnail(client, token: token).0 == .unauthorized)

            let newToken = try await store.service.issueToken(for: "alice")
            #expect(try await getThumbnail(client, token: newToken).0 == .ok)
            #expect(try await getThumbnail(client, token: newToken).0 == .ok)
            #expect(try await keptAnswers(client) == 2)
            _ = try await store.service.delete(try ObjectPath(bucket: "spots", name: "fort-point/gate.jpg"), by: alice)
            #expect(try await getThumbnail(client, token: newToken).0 == .notFound)
            #expect(try await keptAnswers(client) == 2)
        }
    }

    /// An answer to an ID token is given again only until the token expires: one past its
    /// `exp` (still accepted within the 60 s of skew) always goes to the router.
    @Test func answersToAnIDTokenAreNotGivenAfterItExpires() async throws {
        let (store, _, _) = try await storeWithPhoto()
        let issuer = try TestIssuer()
        try await issuer.serve { url in
            let service = try issuer.accepted(by: store.service, keys: url)
            // Another user than alice, whose uid is one of SpotStore's own tokens.
            var lapsed = issuer.claims("ida")
            lapsed["exp"] = .int(Int64(Date().timeIntervalSince1970) - 30)
            let fresh = try await issuer.token(issuer.claims("ida"))
            let expired = try await issuer.token(lapsed)
            try await app(service, rules: store.rules).test(.live) { client in
                var statuses: [HTTPResponse.Status] = []
                for _ in 0..<3 { statuses.append(try await getThumbnail(client, token: expired).0) }
                let keptForExpired = try await keptAnswers(client)
                for _ in 0..<3 { statuses.append(try await getThumbnail(client, token: fresh).0) }
                let keptForFresh = try await keptAnswers(client)
                #expect(statuses.allSatisfy { $0 == .ok }, "\(statuses)")
                #expect(keptForExpired == 0, "past its exp, every request goes to the router")
                #expect(keptForFresh == 2)
            }
        }
    }

    @Test func reloadedRulesAreAppliedToTheNextRequest() async throws {
        let (store, _, token) = try await storeWithPhoto()
        let policy = ReloadablePolicy(store.rules)
        let service = try StorageService(
            catalog: store.service.catalog, blobs: store.service.blobs, policy: policy,
            configuration: ServiceConfiguration(temporaryDirectory: "\(store.root)/tmp"))
        try await app(service, rules: policy).test(.live) { client in
            #expect(try await getThumbnail(client, token: token).0 == .ok)
            #expect(try await getThumbnail(client, token: token).0 == .ok)
            #expect(try await keptAnswers(client) == 1)
            policy.replace(with: try RulesPolicy(text: "service firebase.storage {\n  match /b/spots/o/{spotId}/{file} {\n    allow read: if false;\n  }\n}\n", fileName: "rules"))
            #expect(try await getThumbnail(client, token: token).0 == .forbidden)
            #expect(try await keptAnswers(client) == 1)
        }
    }

    @Test func rulesReadingTheClockKeepNoAnswer() async throws {
        let rules = """
            service firebase.storage {
              match /b/spots/o/{spotId}/{file} {
                allow read, write: if request.auth != null && request.time > timestamp.date(2020, 1, 1);
              }
            }
            """
        let (store, _, token) = try await storeWithPhoto(rules: rules)
        #expect(store.rules.revision == nil)
        let (statuses, kept) = try await app(store.service, rules: store.rules).test(.live) { client in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<3 { statuses.append(try await getThumbnail(client, token: token).0) }
            return (statuses, try await keptAnswers(client))
        }
        #expect(statuses == [.ok, .ok, .ok] && kept == 0)
    }

    @Test func aClientThatFailedTooOftenIsRefusedEvenAKeptAnswer() async throws {
        let (store, _, token) = try await storeWithPhoto()
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, maxFailedAuthentications: 2)
        let (statuses, kept) = try await app(store.service, rules: store.rules, configuration: configuration).test(.live) { client in
            var statuses: [HTTPResponse.Status] = []
            for token in [token, token, "sst_a", "sst_b", token] { statuses.append(try await getThumbnail(client, token: token).0) }
            return (statuses, try await keptAnswers(client))
        }
        #expect(statuses == [.ok, .ok, .unauthorized, .unauthorized, .tooManyRequests] && kept == 1)
    }

    /// Behind a load balancer every connection comes from the proxy: answers are still kept,
    /// and the limit applies to the client `X-Forwarded-For` names, not to the proxy.
    @Test func behindATrustedProxyAnswersAreKeptAndTheLimitIsPerClient() async throws {
        let (store, _, token) = try await storeWithPhoto()
        let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, maxFailedAuthentications: 2, addressing: ClientAddressing(trustedProxies: ["127.0.0.1"]))
        let (statuses, kept) = try await app(store.service, rules: store.rules, configuration: configuration).test(.live) { client in
            var statuses: [HTTPResponse.Status] = []
            for (token, address) in [(token, "198.51.100.1"), (token, "198.51.100.1"), ("sst_a", "203.0.113.9"), ("sst_b", "203.0.113.9"),
                                    (token, "203.0.113.9"), (token, "198.51.100.1")] {
                statuses.append(try await getThumbnail(client, token: token, headers: [.xForwardedFor: address]).0)
            }
            return (statuses, try await keptAnswers(client))
        }
        #expect(statuses == [.ok, .ok, .unauthorized, .unauthorized, .tooManyRequests, .ok] && kept == 2)
    }

    @Test func keptAnswersStayWithinTheirBudget() throws {
        let store = try TestStore()
        let kept = KeptThumbnails(changes: store.service.catalog.changes, rules: store.rules, byteBudget: 100)
        let stamp = try #require(kept.stamp())
        let answer = { (bytes: Int) in KeptThumbnails.Answer(headers: [:], body: ByteBuffer(repeating: 1, count: bytes), route: "r") }
        let key = { (target: String) in KeptThumbnails.Key(authorization: "Bearer t", target: target) }
        kept.keep(answer(60), for: key("a"), stampedBefore: stamp)
        kept.keep(answer(30), for: key("b"), stampedBefore: stamp)
        #expect(kept.answer(to: key("a"))?.body.readableBytes == 60 && kept.answer(to: key("b")) != nil)
        kept.keep(answer(20), for: key("c"), stampedBefore: stamp)  // 110 bytes: all dropped, then c kept
        #expect(kept.answer(to: key("a")) == nil && kept.answer(to: key("b")) == nil && kept.answer(to: key("c")) != nil)
        kept.keep(answer(101), for: key("d"), stampedBefore: stamp)  // larger than the budget: not kept
        #expect(kept.answer(to: key("d")) == nil && kept.answer(to: key("c")) != nil)
        kept.keep(answer(10), for: key("e"), stampedBefore: nil)  // worked out without a stamp: not kept
        #expect(kept.answer(to: key("e")) == nil)
    }
}

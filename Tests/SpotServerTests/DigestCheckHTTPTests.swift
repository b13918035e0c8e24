import Foundation
import Hummingbird
import HummingbirdTesting
import SpotCore
import Testing
import TestSupport

/// `POST /v0/b/{bucket}/digests`, which bulk imports ask before uploading.
extension HTTPTests {
    @Test func digestChecksAnswerPerUserWithTheLimits() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let paris = try fixture("geotagged/paris.jpg")
        let parisDigest = try #require(try await store.service.upload(
            ObjectPath(bucket: "spots", name: "louvre/1.jpg"), by: store.service.authenticate(token: alice),
            contentType: nil, declaredSize: nil, body: body(paris)).object.digest.hex)
        let unknown = String(repeating: "ab", count: 32)
        func check(_ token: String?, _ json: String) async throws -> (HTTPResponse.Status, [String: Any]) {
            try await app(store).test(.router) { client in
                try await client.execute(
                    uri: "/v0/b/spots/digests", method: .post, headers: token.map(auth) ?? [:], body: ByteBuffer(string: json)
                ) { response in
                    (response.status, (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:])
                }
            }
        }
        let (status, answer) = try await check(alice, #"{"digests": ["\#(parisDigest)", "\#(unknown)"], "probe": "new/1.jpg"}"#)
        #expect(status == .ok)
        #expect(answer["present"] as? [String: [String]] == [parisDigest: ["louvre/1.jpg"]])
        let limits = try #require(answer["limits"] as? [String: Any])
        #expect(limits["maxBytes"] as? Int == 6 * 1024 * 1024)
        #expect(limits["maxObjectsPerSpot"] as? Int == 4)
        #expect(limits["contentTypes"] as? [String] == ["image/avif", "image/heic", "image/heif", "image/jpeg", "image/png", "image/webp"])
        // Another user's photos are not theirs to skip.
        #expect(try await check(bob, #"{"digests": ["\#(parisDigest)"]}"#).1["present"] as? [String: [String]] == [:])
        #expect(try await check(nil, #"{"digests": []}"#).0 == .unauthorized)
        #expect(try await check(alice, #"{"digests": ["nothex"]}"#).0 == .badRequest)
        #expect(try await check(alice, "not json").0 == .badRequest)
        let tooMany = (0...1000).map { _ in "\"\(unknown)\"" }.joined(separator: ",")
        #expect(try await check(alice, #"{"digests": [\#(tooMany)]}"#).0 == .badRequest)
        // A body over the 256 KiB a full batch needs is refused before it is parsed (it was a 500).
        let huge = (0..<5000).map { _ in "\"\(unknown)\"" }.joined(separator: ",")
        #expect(try await check(alice, #"{"digests": [\#(huge)]}"#).0 == .contentTooLarge)
        #expect(try await check(alice, #"{"digests": [], "probe": "../x"}"#).0 == .badRequest)
    }
}

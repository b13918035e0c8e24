import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import SpotCore
import SpotServer
import Testing
import TestSupport

/// After `fsck --repair` quarantined a corrupt blob, its object and thumbnail answer 500
/// with the reason over HTTP, never wrong bytes; other objects are unaffected.
@Suite struct DamagedBlobHTTPTests {
    @Test func damagedOriginalsAndThumbnailsAnswer500WithTheReason() async throws {
        let store = try TestStore()
        let (alice, token) = try await store.user("alice")
        let paris = try await store.service.upload(
            try ObjectPath(bucket: "spots", name: "eiffel/paris.jpg"), by: alice, contentType: nil, declaredSize: nil, body: body(try fixture("geotagged/paris.jpg"))).object
        let coffee = try fixture("photos/coffee.jpg")
        _ = try await store.service.upload(try ObjectPath(bucket: "spots", name: "cafe/coffee.jpg"), by: alice, contentType: nil, declaredSize: nil, body: body(coffee))
        let thumbnail = try #require(paris.thumbnails.first { $0.size == 256 })
        for digest in [paris.digest, thumbnail.digest] {
            try await store.damageBlob(digest) { $0[..<50] + [0xFF, 0x00, 0xFF] + $0[53...] }
        }
        _ = try await store.service.checkIntegrity(repair: true)

        let app = SpotServer.makeApplication(service: store.service, configuration: .init(host: "127.0.0.1", port: 0), logger: Logger(label: "test"))
        let auth: HTTPFields = [.authorization: "Bearer \(token)"]
        try await app.test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/eiffel%2Fparis.jpg?alt=media", method: .get, headers: auth) { response in
                #expect(response.status == .internalServerError)
                let text = String(buffer: response.body)
                #expect(text.contains("damaged: blob \(paris.digest) of spots/eiffel/paris.jpg failed its checksum; restore it or delete the object"), "\(text)")
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true, "an error body, never image bytes")
            }
            try await client.execute(uri: "/v0/b/spots/o/eiffel%2Fparis.jpg?alt=thumbnail&size=256", method: .get, headers: auth) { response in
                #expect(response.status == .internalServerError)
                #expect(String(buffer: response.body).contains("damaged: blob \(thumbnail.digest) of the 256 px thumbnail of spots/eiffel/paris.jpg failed its checksum"))
            }
            try await client.execute(uri: "/v0/b/spots/o/eiffel%2Fparis.jpg?alt=thumbnail&size=1024", method: .get, headers: auth) { response in
                #expect(response.status == .ok, "the other thumbnail is whole")
            }
            try await client.execute(uri: "/v0/b/spots/o/eiffel%2Fparis.jpg", method: .get, headers: auth) { response in
                #expect(response.status == .ok, "metadata still answers")
            }
            try await client.execute(uri: "/v0/b/spots/o/cafe%2Fcoffee.jpg?alt=media", method: .get, headers: auth) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == coffee)
            }
            // Deleting the damaged object is one way out; the same bytes uploaded again are served whole.
            try await client.execute(uri: "/v0/b/spots/o/eiffel%2Fparis.jpg", method: .delete, headers: auth) { response in
                #expect(response.status == .noContent)
            }
            let bytes = try fixture("geotagged/paris.jpg")
            try await client.execute(uri: "/v0/b/spots/o/eiffel%2Fparis.jpg", method: .put, headers: auth, body: ByteBuffer(bytes: bytes)) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/v0/b/spots/o/eiffel%2Fparis.jpg?alt=media", method: .get, headers: auth) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == bytes)
            }
        }
    }

    /// A blob gone from disk before any fsck: the download answers 500 naming it, with no
    /// 200 head sent first.
    @Test func aMissingBlobAnswers500BeforeAnyByteIsSent() async throws {
        let store = try TestStore()
        let (alice, token) = try await store.user("alice")
        let bytes = randomBytes(600_000)
        let stored = try await store.service.upload(
            try ObjectPath(bucket: "users", name: "alice/lost.bin"), by: alice, contentType: nil, declaredSize: nil, body: body(bytes)).object
        try await store.service.blobs.remove(stored.digest)

        let app = SpotServer.makeApplication(service: store.service, configuration: .init(host: "127.0.0.1", port: 0), logger: Logger(label: "test"))
        try await app.test(.live) { client in
            try await client.execute(uri: "/v0/b/users/o/alice%2Flost.bin?alt=media", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                #expect(response.status == .internalServerError)
                #expect(String(buffer: response.body).contains("blob \(stored.digest) is missing"), "\(String(buffer: response.body))")
            }
        }
    }
}

import Foundation
import Hummingbird
import HummingbirdTesting
import SpotCore
import SpotService
import Testing
import TestSupport

/// Expiring signed download URLs: made by the owner, usable without a token, 403 when
/// altered or expired.
extension HTTPTests {
    @Test func signedURLsWorkWithoutATokenUntilAlteredOrExpired() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let bytes = try fixture("geotagged/rio.jpg")
        try await app(store).test(.router) { client in
            for name in ["a%2F1.jpg", "a%2F2.jpg"] {
                try await client.execute(uri: "/v0/b/spots/o/\(name)", method: .put, headers: auth(alice), body: ByteBuffer(bytes: bytes)) { response in
                    #expect(response.status == .ok)
                }
            }
            try await client.execute(uri: "/v0/b/spots/o/a%2F1.jpg?alt=signedUrl&expiresIn=600", method: .get, headers: auth(bob)) { response in
                #expect(response.status == .forbidden, "only the owner signs")
            }
            try await client.execute(uri: "/v0/b/spots/o/a%2F1.jpg?alt=signedUrl&expiresIn=999999999", method: .get, headers: auth(alice)) { response in
                #expect(response.status == .badRequest, "at most 7 days")
            }
            let url = try await client.execute(uri: "/v0/b/spots/o/a%2F1.jpg?alt=signedUrl&expiresIn=600", method: .get, headers: auth(alice)) { response in
                #expect(response.status == .ok)
                return try #require(try json(response)["url"] as? String)
            }
            let signed = String(url[try #require(url.range(of: "/v0/b/")).lowerBound...])
            try await client.execute(uri: signed, method: .get) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == bytes)
            }
            try await client.execute(uri: signed, method: .get, headers: [.range: "bytes=-10"]) { response in
                #expect(response.status == .partialContent)
            }
            let signature = String(signed[try #require(signed.range(of: "signature=")).upperBound...])
            let flipped = (signature.first == "0" ? "1" : "0") + signature.dropFirst()
            let expires = try #require(signed.split(separator: "&").first { $0.hasPrefix("expires=") }).dropFirst("expires=".count)
            let signedAt = try #require(signed.split(separator: "&").first { $0.hasPrefix("signedAt=") })
            // A link made before links named their maker: refused with what to do.
            let unnamed = try await client.execute(uri: signed.replacingOccurrences(of: "&\(signedAt)", with: ""), method: .get)
            #expect(unnamed.status == .badRequest)
            #expect(try errorMessage(unnamed).contains("ask for a new one"))
            for altered in [
                signed.replacingOccurrences(of: signedAt, with: "signedAt=\(Int64(signedAt.dropFirst("signedAt=".count))! + 5000)"),
                signed.replacingOccurrences(of: "a%2F1.jpg", with: "a%2F2.jpg"),
                signed.replacingOccurrences(of: "expires=\(expires)", with: "expires=\(Int64(expires)! + 1)"),
                signed.replacingOccurrences(of: signature, with: flipped),
                signed.replacingOccurrences(of: signature, with: "zz"),
            ] {
                try await client.execute(uri: altered, method: .get) { response in
                    #expect(response.status == .forbidden, "\(altered)")
                }
            }
            try await client.execute(uri: signed.replacingOccurrences(of: "alt=media", with: "alt=thumbnail"), method: .get) { response in
                #expect(response.status == .badRequest)
            }
            // A URL signed with the server's key that expired a second ago.
            let path = try ObjectPath(bucket: "spots", name: "a/1.jpg")
            let past = Int64(Date().timeIntervalSince1970) - 1
            let grant = DownloadGrant(expires: past, signedBy: "alice", signedAt: (past - 60) * 1000)
            let expired = "/v0/b/spots/o/a%2F1.jpg?alt=media&expires=\(past)&signedBy=alice&signedAt=\(grant.signedAt)"
                + "&signature=\(URLSigner(key: store.signingKey).signature(for: path, grant))"
            try await client.execute(uri: expired, method: .get) { response in
                #expect(response.status == .forbidden)
                let message = try errorMessage(response)
                #expect(message.contains("expired"))
            }
            // A deleted object's URL stops working.
            try await client.execute(uri: "/v0/b/spots/o/a%2F1.jpg", method: .delete, headers: auth(alice)) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: signed, method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }
}

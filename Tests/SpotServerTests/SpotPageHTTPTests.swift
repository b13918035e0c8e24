import Foundation
import Hummingbird
import HummingbirdTesting
import Access
import HTTPTypes
import Media
import SpotService
import SpotCore
import Testing
import TestSupport

/// `/s/{bucket}/{spotId}`: spot pages made on the server, shown by the rules or through
/// share links that end, with their photos GPS-free where the spot hides positions.
extension HTTPTests {
    /// The default rules, with spots `open/…` anyone may list and read.
    static let rulesWithAnOpenSpot = RulesPolicy.defaultText.replacingOccurrences(of: "  // Any other bucket", with: """
          match /b/spots/o/open/{path=**} {
            allow list, get: if true;
          }

          // Any other bucket
        """)

    /// Stores `fixture` at `bucket/name` (`path`) as `user`.
    func put(_ path: String, fixture name: String, by user: User, in store: TestStore) async throws {
        let bytes = try fixture(name)
        let (bucket, rest) = (String(path.prefix { $0 != "/" }), String(path.drop { $0 != "/" }.dropFirst()))
        _ = try await store.service.upload(
            try ObjectPath(bucket: bucket, name: rest), by: user, contentType: "image/jpeg", declaredSize: Int64(bytes.count), body: body(bytes))
    }

    /// `src`s and `href`s of a page that lead to its photos.
    func photoLinks(_ page: String) -> [String] {
        page.components(separatedBy: "\"").filter { $0.hasPrefix("/s/") && $0.contains("/photo/") }.map { $0.replacingOccurrences(of: "&amp;", with: "&") }
    }

    @Test func aShareLinkShowsAPrivateSpotWithItsPhotosWithoutGPSUntilItIsRevoked() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let original = try fixture("geotagged/paris.jpg")
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/louvre%2F1.jpg", method: .put, headers: auth(alice), body: ByteBuffer(bytes: original)) { response in
                #expect(response.status == .ok)
            }
            let edit = ByteBuffer(string: #"{"name": "<script>alert(1)</script> Louvre", "description": "Pyramid & \"glass\"", "hideLocation": true}"#)
            try await client.execute(uri: "/v0/b/spots/spots/louvre", method: .patch, headers: auth(alice), body: edit) { response in
                #expect(response.status == .ok)
            }

            // Private without a link: a page that says so, and tells nothing more.
            let unknown = try await client.execute(uri: "/s/spots/nowhere", method: .get) { String(buffer: $0.body) }
            try await client.execute(uri: "/s/spots/louvre", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(String(buffer: response.body) == unknown)
            }
            try await client.execute(uri: "/s/spots/louvre/photo/1.jpg?size=256", method: .get) { response in
                #expect(response.status == .notFound)
            }

            // Only the owner shares.
            let ask = ByteBuffer(string: #"{"expiresIn": 3600}"#)
            try await client.execute(uri: "/v0/b/spots/spots/louvre/shares", method: .post, headers: auth(bob), body: ask) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v0/b/spots/spots/louvre/shares", method: .post, headers: auth(alice), body: ByteBuffer(string: #"{"expiresIn": 10}"#)) { response in
                #expect(response.status == .badRequest)
            }
            let (link, id) = try await client.execute(uri: "/v0/b/spots/spots/louvre/shares", method: .post, headers: auth(alice), body: ask) { response in
                #expect(response.status == .ok)
                let share = try json(response)
                let url = try #require(share["url"] as? String)
                return (String(url[try #require(url.range(of: "/s/")).lowerBound...]), try #require(share["id"] as? String))
            }
            let page = try await client.execute(uri: link, method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
                #expect(response.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
                return String(buffer: response.body)
            }
            #expect(page.contains("<h1>&lt;script&gt;alert(1)&lt;/script&gt; Louvre</h1>") && !page.contains("<script>"))
            #expect(page.contains("Pyramid &amp; &quot;glass&quot;"))
            #expect(page.contains("Paris"), "the city shows")
            #expect(!page.contains("48.8"), "the position does not")
            #expect(page.contains(#"<meta property="og:image" content="http"#) && page.contains("twitter:card"))
            let links = photoLinks(page)
            #expect(links.count == 2, "a thumbnail and the photo")
            for photo in links {
                try await client.execute(uri: photo, method: .get) { response in
                    #expect(response.status == .ok, "\(photo)")
                    let bytes = Array(buffer: response.body)
                    #expect(ExifReader.read(jpeg: bytes).location == nil, "no GPS in \(photo)")
                    if !photo.contains("size=") { #expect(bytes == LocationStripper.removingLocation(from: original)) }
                }
            }
            // The link opens this spot only.
            try await client.execute(uri: "/v0/b/spots/o/other%2F1.jpg", method: .put, headers: auth(alice), body: ByteBuffer(bytes: try fixture("geotagged/rio.jpg"))) { response in
                #expect(response.status == .ok)
            }
            let secret = String(link[try #require(link.range(of: "share=")).upperBound...])
            try await client.execute(uri: "/s/spots/other?share=\(secret)", method: .get) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/s/spots/other/photo/1.jpg?share=\(secret)", method: .get) { response in
                #expect(response.status == .notFound)
            }

            // Listed for its owner, not for others; revoked, it shows nothing.
            try await client.execute(uri: "/v0/b/spots/spots/louvre/shares", method: .get, headers: auth(bob)) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v0/b/spots/spots/louvre/shares", method: .get, headers: auth(alice)) { response in
                let shares = try #require(try json(response)["shares"] as? [[String: Any]])
                #expect(shares.map { $0["id"] as? String } == [id] && shares.allSatisfy { $0["url"] == nil })
            }
            try await client.execute(uri: "/v0/b/spots/spots/louvre/shares/\(id)", method: .delete, headers: auth(bob)) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v0/b/spots/spots/louvre/shares/\(id)", method: .delete, headers: auth(alice)) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: link, method: .get) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: try #require(links.first), method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func aShareLinkEndsWhenItExpiresOrItsMakerIsRevoked() async throws {
        let store = try TestStore()
        let clock = store.clock
        let (alice, _) = try await store.user("alice")
        try await put("spots/park/1.jpg", fixture: "geotagged/sydney.jpg", by: alice, in: store)
        let expiring = try await store.service.shareSpot(bucket: "spots", id: "park", lifetime: 60, by: alice)
        let lasting = try await store.service.shareSpot(bucket: "spots", id: "park", lifetime: 3600, by: alice)
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/s/spots/park?share=\(expiring.secret)", method: .get) { response in
                #expect(response.status == .ok)
            }
            clock.advance(by: 61)
            try await client.execute(uri: "/s/spots/park?share=\(expiring.secret)", method: .get) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/s/spots/park?share=\(lasting.secret)", method: .get) { response in
                #expect(response.status == .ok)
            }
            clock.advance(by: 1)
            try await store.service.revokeTokens(of: "alice")
            try await client.execute(uri: "/s/spots/park?share=\(lasting.secret)", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func aSpotTheRulesOpenToAnyoneHasAPageWithoutALink() async throws {
        let store = try TestStore(rules: Self.rulesWithAnOpenSpot)
        let (alice, _) = try await store.user("alice")
        try await put("spots/open/1.jpg", fixture: "geotagged/rio.jpg", by: alice, in: store)
        try await put("spots/closed/1.jpg", fixture: "geotagged/rio.jpg", by: alice, in: store)
        try await app(store).test(.router) { client in
            let page = try await client.execute(uri: "/s/spots/open", method: .get) { response in
                #expect(response.status == .ok)
                return String(buffer: response.body)
            }
            #expect(!page.contains("noindex") && !page.contains("share="))
            for photo in photoLinks(page) {
                try await client.execute(uri: photo, method: .get) { response in
                    #expect(response.status == .ok, "\(photo)")
                }
            }
            try await client.execute(uri: "/s/spots/closed", method: .get) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/s/spots/open/photo/..%2Fclosed%2F1.jpg", method: .get) { response in
                #expect(response.status == .notFound || response.status == .badRequest)
            }
        }
    }

    @Test func aPageShowsItsPhotosOnlyAndItsRefusalsSayNoMoreThanA404() async throws {
        let store = try TestStore()
        let (alice, token) = try await store.user("alice")
        try await put("users/alice/p.jpg", fixture: "geotagged/paris.jpg", by: alice, in: store)
        let note = Array("secret-alice".utf8)
        _ = try await store.service.upload(
            try ObjectPath(bucket: "users", name: "alice/deep/secret.txt"), by: alice, contentType: "text/plain",
            declaredSize: Int64(note.count), body: body(note))
        let (secret, _) = try await store.service.shareSpot(bucket: "users", id: "alice", lifetime: 3600, by: alice)
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/s/users/alice/photo/p.jpg?share=\(secret)", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.cacheControl] == "private, max-age=3600", "a link's photo is not for shared caches")
            }
            // A file the page does not show is not opened by its link, whatever its name.
            for hidden in ["deep/secret.txt", "deep%2Fsecret.txt"] {
                try await client.execute(uri: "/s/users/alice/photo/\(hidden)?share=\(secret)", method: .get) { response in
                    #expect(response.status == .notFound, "\(hidden)")
                    #expect(!String(buffer: response.body).contains("secret-alice"))
                }
            }
            // Without the link: the same 404 as for nothing at all, not the rules' reasons.
            let nothing = try await client.execute(uri: "/s/users/alice/photo/none.jpg", method: .get) { String(buffer: $0.body) }
            try await client.execute(uri: "/s/users/alice/photo/p.jpg", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body) == nothing)
                #expect(response.headers[.wwwAuthenticate] == nil)
            }
            try await client.execute(uri: "/s/users/alice/photo/p.jpg?size=256", method: .get) { response in
                #expect(response.status == .notFound)
            }
            let page = try await client.execute(uri: "/s/users/alice?share=\(secret)", method: .get) { String(buffer: $0.body) }
            #expect(page.contains("1 photo ·"), "it counts what it shows")
            _ = token
        }
    }

    @Test func aSpotHasAtMostAHundredLiveShareLinks() async throws {
        let store = try TestStore()
        let (alice, token) = try await store.user("alice")
        try await put("spots/park/1.jpg", fixture: "geotagged/sydney.jpg", by: alice, in: store)
        for _ in 0..<StorageService.maxSharesPerSpot {
            _ = try await store.service.shareSpot(bucket: "spots", id: "park", lifetime: 3600, by: alice)
        }
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/spots/park/shares", method: .post, headers: auth(token), body: ByteBuffer(string: "{}")) { response in
                #expect(response.status == .conflict)
                let message = try errorMessage(response)
                #expect(message.contains("revoke some"))
            }
        }
    }
}

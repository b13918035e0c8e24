import Foundation
import Hummingbird
import HummingbirdTesting
import Media
import SpotCore
import Testing
import TestSupport

/// Download tokens, and what readers see when an owner hides a spot's position.
extension HTTPTests {
    /// A link is never stronger than the person who made it: revoking or deleting a user
    /// ends the signed URLs and download tokens they made on request; the token made on
    /// upload belongs to the object and stays, unless the revocation replaces it.
    @Test func linksEndWithTheUserWhoMadeThem() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        try await app(store).test(.router) { client in
            let object = "/v0/b/spots/o/rio%2F1.jpg"
            let put = try await client.execute(uri: object, method: .put, headers: auth(alice), body: ByteBuffer(bytes: try fixture("photos/rocket.jpg")))
            #expect(put.status == .ok)
            let uploaded = try #require(try json(put)["downloadTokens"] as? String)
            func relative(_ url: String) throws -> String { String(url[try #require(url.range(of: "/v0/b/")).lowerBound...]) }
            func signedURL(_ token: String) async throws -> String {
                let response = try await client.execute(uri: "\(object)?alt=signedUrl", method: .get, headers: auth(token))
                #expect(response.status == .ok)
                return try relative(try #require(try json(response)["url"] as? String))
            }
            func madeToken(_ token: String) async throws -> String {
                let response = try await client.execute(uri: "\(object)?alt=downloadTokens", method: .post, headers: auth(token))
                return try relative(try #require(try json(response)["url"] as? String))
            }
            func refusal(_ uri: String) async throws -> String? {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .forbidden, "\(uri)")
                return try errorMessage(response)
            }
            let onUpload = "\(object)?alt=media&token=\(uploaded)"
            let (signed, made) = (try await signedURL(alice), try await madeToken(alice))
            for uri in [signed, made, onUpload] { #expect(try await status(client, .get, uri) == .ok, "\(uri)") }
            // A forged maker breaks the signature.
            #expect(try await status(client, .get, signed.replacingOccurrences(of: "signedBy=alice", with: "signedBy=bob")) == .forbidden)

            try await store.service.revokeTokens(of: "alice")
            for uri in [signed, made] { #expect(try await refusal(uri)?.contains("revoked since") == true) }
            #expect(try await status(client, .get, onUpload) == .ok, "the token made on upload belongs to the object")

            // Signed in again, the user's new links work; replacing the download tokens ends the upload's.
            let again = try await store.service.issueToken(for: "alice")
            let (signedAgain, madeAgain) = (try await signedURL(again), try await madeToken(again))
            for uri in [signedAgain, madeAgain] { #expect(try await status(client, .get, uri) == .ok, "\(uri)") }
            #expect(try await store.service.replaceDownloadTokens(of: "alice") == 1)
            #expect(try await status(client, .get, onUpload) == .forbidden)
            #expect(try await status(client, .get, madeAgain) == .forbidden)
            let metadata = try await client.execute(uri: object, method: .get, headers: auth(again))
            let replaced = try #require(try json(metadata)["downloadTokens"] as? String)
            #expect(replaced != uploaded)
            #expect(try await status(client, .get, "\(object)?alt=media&token=\(replaced)") == .ok)

            // Deleted: what the user made ends; the object's token stays.
            let lastMade = try await madeToken(again)
            try await store.service.deleteUser("alice")
            for uri in [signedAgain, lastMade] { #expect(try await refusal(uri)?.contains("no longer exists") == true) }
            #expect(try await status(client, .get, "\(object)?alt=media&token=\(replaced)") == .ok)
            // Created again under the same uid: still not the maker of the old links.
            _ = try await store.user("alice")
            #expect(try await refusal(signedAgain)?.contains("deleted since") == true)
        }
    }

    @Test func downloadTokensWorkUntilRevokedAndNeverOutliveTheirObject() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let bytes = try fixture("geotagged/rio.jpg")
        try await app(store).test(.router) { client in
            let object = "/v0/b/spots/o/rio%2F1.jpg"
            #expect(try await status(client, .put, object, alice, body: bytes) == .ok)
            #expect(try await status(client, .post, "\(object)?alt=downloadTokens", bob) == .forbidden, "only the owner")
            #expect(try await status(client, .post, "\(object)?alt=downloadTokens") == .unauthorized)
            #expect(try await status(client, .post, object, alice) == .badRequest)
            func makeToken() async throws -> (id: String, uri: String) {
                try await client.execute(uri: "\(object)?alt=downloadTokens", method: .post, headers: auth(alice)) { response in
                    #expect(response.status == .ok)
                    let answer = try json(response)
                    let url = try #require(answer["url"] as? String)
                    #expect((answer["token"] as? String).map { url.hasSuffix("alt=media&token=\($0)") } == true)
                    return (try #require(answer["id"] as? String), String(url[try #require(url.range(of: "/v0/b/")).lowerBound...]))
                }
            }
            let first = try await makeToken()
            try await client.execute(uri: first.uri, method: .get) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == bytes)
            }
            try await client.execute(uri: first.uri, method: .get, headers: [.range: "bytes=-500"]) { response in
                #expect(response.status == .partialContent)
                #expect(Array(buffer: response.body) == Array(bytes.suffix(500)))
            }
            #expect(try await status(client, .get, first.uri + "x") == .forbidden)
            #expect(try await status(client, .get, first.uri.replacingOccurrences(of: "rio%2F1", with: "rio%2F2")) == .forbidden)
            let second = try await makeToken()
            try await client.execute(uri: "\(object)?alt=downloadTokens", method: .get, headers: auth(alice)) { response in
                let tokens = try #require(try json(response)["tokens"] as? [[String: Any]])
                // The first is the token made on upload (what getDownloadURL() reads).
                #expect(tokens.compactMap { $0["id"] as? String }.dropFirst() == [first.id, second.id])
                #expect(tokens.count == 3)
                #expect(!String(buffer: response.body).contains("sdt_"), "tokens are never shown again")
            }
            #expect(try await status(client, .get, "\(object)?alt=downloadTokens", bob) == .forbidden)

            // A mistyped revocation is refused and deletes nothing.
            #expect(try await status(client, .delete, "\(object)?alt=downloadToken&id=\(first.id)", alice) == .badRequest)
            #expect(try await status(client, .delete, "\(object)?alt=downloadTokens&id=\(first.id)", bob) == .forbidden)
            #expect(try await status(client, .delete, "\(object)?alt=downloadTokens&id=\(first.id)", alice) == .noContent)
            #expect(try await status(client, .get, first.uri) == .forbidden, "revoked: stops at once")
            #expect(try await status(client, .get, second.uri) == .ok)
            #expect(try await status(client, .delete, "\(object)?alt=downloadTokens&id=\(first.id)", alice) == .notFound)

            // Replaced or deleted, the object takes its tokens with it.
            #expect(try await status(client, .put, object, alice, body: try fixture("gps.jpg")) == .ok)
            #expect(try await status(client, .get, second.uri) == .forbidden)
            let third = try await makeToken()
            #expect(try await status(client, .delete, object, alice) == .noContent)
            #expect(try await status(client, .put, object, alice, body: try fixture("gps.jpg")) == .ok)
            #expect(try await status(client, .get, third.uri) == .forbidden)
        }
    }

    @Test func aHiddenPositionIsOmittedForEveryoneButTheOwner() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let original = try fixture("geotagged/paris.jpg")
        #expect(ExifReader.read(jpeg: original).location != nil)
        try await app(store).test(.router) { client in
            let object = "/v0/b/spots/o/louvre%2F1.jpg"
            #expect(try await status(client, .put, object, alice, body: original) == .ok)
            func location(_ uri: String, _ token: String) async throws -> [String: Any]? {
                try await client.execute(uri: uri, method: .get, headers: auth(token)) { response in
                    #expect(response.status == .ok)
                    return (try json(response)["photo"] as? [String: Any])?["location"] as? [String: Any]
                }
            }
            func media(_ uri: String, _ token: String? = nil) async throws -> [UInt8] {
                try await client.execute(uri: uri, method: .get, headers: token.map(auth) ?? [:]) { response in
                    #expect(response.status == .ok)
                    return Array(buffer: response.body)
                }
            }
            #expect(try await location(object, bob)?["latitude"] is Double, "shown by default")
            #expect(try await media("\(object)?alt=media", bob) == original)

            let hide = ByteBuffer(string: #"{"hideLocation": true}"#)
            #expect(try await client.execute(uri: "/v0/b/spots/spots/louvre", method: .patch, headers: auth(bob), body: hide) { $0.status } == .forbidden)
            try await client.execute(uri: "/v0/b/spots/spots/louvre", method: .patch, headers: auth(alice), body: hide) { response in
                #expect(response.status == .ok)
                let spot = try json(response)
                #expect(spot["locationHidden"] as? Bool == true)
            }

            // Metadata: the city stays, the coordinates go, for everyone but the owner.
            let seenByBob = try #require(try await location(object, bob))
            #expect(seenByBob["latitude"] == nil && seenByBob["longitude"] == nil && seenByBob["distanceKm"] == nil)
            #expect(seenByBob["city"] as? String == "Paris")
            #expect(try await location(object, alice)?["latitude"] is Double)
            let listed = try await client.execute(uri: "/v0/b/spots/o?prefix=louvre%2F", method: .get, headers: auth(bob)) { String(buffer: $0.body) }
            #expect(!listed.contains("latitude") && listed.contains("Paris"))
            let spot = try await client.execute(uri: "/v0/b/spots/spots/louvre", method: .get, headers: auth(bob)) { String(buffer: $0.body) }
            #expect(!spot.contains("latitude") && spot.contains("Paris"))
            let near = try await client.execute(uri: "/v0/b/spots/spots?near=48.86,2.34&radiusKm=50", method: .get, headers: auth(bob)) { String(buffer: $0.body) }
            #expect(!near.contains("louvre"))

            // Originals: GPS removed for others, the image data untouched; the owner gets the upload.
            let stripped = try await media("\(object)?alt=media", bob)
            #expect(stripped != original)
            #expect(stripped == LocationStripper.removingLocation(from: original))
            #expect(ExifReader.read(jpeg: stripped).location == nil)
            #expect(ExifReader.read(jpeg: stripped).cameraModel == ExifReader.read(jpeg: original).cameraModel)
            #expect(try await media("\(object)?alt=media", alice) == original)
            try await client.execute(uri: "\(object)?alt=media", method: .get, headers: auth(bob).merging([.range: "bytes=-100"])) { response in
                #expect(response.status == .partialContent)
                #expect(Array(buffer: response.body) == Array(stripped.suffix(100)))
            }
            // Links made by the owner are for others too.
            let signed = try await client.execute(uri: "\(object)?alt=signedUrl", method: .get, headers: auth(alice)) { response in
                let url = try #require(try json(response)["url"] as? String)
                return String(url[try #require(url.range(of: "/v0/b/")).lowerBound...])
            }
            #expect(try await media(signed) == stripped)
            let token = try await client.execute(uri: "\(object)?alt=downloadTokens", method: .post, headers: auth(alice)) { response in
                let url = try #require(try json(response)["url"] as? String)
                return String(url[try #require(url.range(of: "/v0/b/")).lowerBound...])
            }
            #expect(try await media(token) == stripped)

            // Shown again, everyone gets the position and the original bytes.
            let show = ByteBuffer(string: #"{"hideLocation": false}"#)
            #expect(try await client.execute(uri: "/v0/b/spots/spots/louvre", method: .patch, headers: auth(alice), body: show) { $0.status } == .ok)
            #expect(try await media("\(object)?alt=media", bob) == original)
        }
        // The GPS-free copy is one more blob, made once (besides the original and its two JPEG and two WebP thumbnails).
        #expect((try await store.storedBlobs()).count == 6)
    }
}

extension HTTPTests {
    /// Without thumbnails there is no photo metadata, but the bytes are still a JPEG with GPS.
    @Test func aHiddenPositionIsStrippedInBucketsWithoutThumbnails() async throws {
        let store = try TestStore(rules: """
            rules_version = '2';
            service firebase.storage {
              match /b/media/o/{spotId}/{file} {
                limit thumbnails: false;
                allow get: if request.auth != null;
                allow write: if request.auth != null && request.auth.uid == spotId;
              }
              match /b/media/o/{path=**} {
                allow list: if request.auth != null;
              }
            }
            """)
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let original = try fixture("geotagged/sydney.jpg")
        try await app(store).test(.router) { client in
            #expect(try await status(client, .put, "/v0/b/media/o/alice%2Fharbour.jpg", alice, body: original) == .ok)
            let hide = ByteBuffer(string: #"{"hideLocation": true}"#)
            #expect(try await client.execute(uri: "/v0/b/media/spots/alice", method: .patch, headers: auth(alice), body: hide) { $0.status } == .ok)
            #expect(try await client.execute(uri: "/v0/b/media/spots/alice", method: .patch, body: hide) { $0.status } == .unauthorized)
            let seen = try await client.execute(uri: "/v0/b/media/o/alice%2Fharbour.jpg?alt=media", method: .get, headers: auth(bob)) {
                Array(buffer: $0.body)
            }
            #expect(seen == LocationStripper.removingLocation(from: original))
            #expect(ExifReader.read(jpeg: seen).location == nil)
        }
    }
}

extension HTTPFields {
    /// These fields with `other`'s added.
    func merging(_ other: HTTPFields) -> HTTPFields {
        var fields = self
        fields.append(contentsOf: other)
        return fields
    }
}

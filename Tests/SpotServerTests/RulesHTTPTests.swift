import Foundation
import Hummingbird
import HummingbirdTesting
import SpotCore
import Testing
import TestSupport

/// A rules file of the kind the service is checked with: private home folders, a public
/// bucket, an admin claim and a spot limit of 2 photos of 1 MiB.
let homesPublicAdminAndSmallSpots = """
    rules_version = '2';
    service firebase.storage {
      function isAdmin() { return request.auth != null && request.auth.token.admin == true; }

      match /b/{bucket}/o/{everything=**} {
        allow delete: if isAdmin();
      }
      match /b/users/o/{uid}/{path=**} {
        allow read, write: if request.auth != null && request.auth.uid == uid;
      }
      match /b/public/o/{path=**} {
        allow read;
        allow write: if isAdmin();
      }
      match /b/spots/o/{spotId}/{file} {
        limit size: 1 MiB, objects: 2, types: ["image/jpeg"];
        allow get: if request.auth != null;
        allow create, update: if request.auth != null && (spot == null || spot.owner == request.auth.uid);
        allow delete: if request.auth != null && spot.owner == request.auth.uid;
      }
    }
    """

extension HTTPTests {
    /// Sends one request and returns its status.
    func status(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ token: String? = nil,
        body: [UInt8]? = nil, contentType: String? = nil
    ) async throws -> HTTPResponse.Status {
        var headers = token.map(auth) ?? [:]
        if let contentType { headers[.contentType] = contentType }
        return try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) }) { $0.status }
    }

    @Test func homeFoldersArePrivateToTheirUser() async throws {
        let store = try TestStore(rules: homesPublicAdminAndSmallSpots)
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let photo = try fixture("gps.jpg")
        try await app(store).test(.router) { client in
            #expect(try await status(client, .put, "/v0/b/users/o/alice%2Fa.jpg", alice, body: photo) == .ok)
            #expect(try await status(client, .get, "/v0/b/users/o/alice%2Fa.jpg?alt=media", alice) == .ok)
            #expect(try await status(client, .get, "/v0/b/users/o?prefix=alice%2F", alice) == .ok)
            #expect(try await status(client, .get, "/v0/b/users/o/alice%2Fa.jpg", bob) == .forbidden)
            #expect(try await status(client, .put, "/v0/b/users/o/alice%2Fb.jpg", bob, body: photo) == .forbidden)
            #expect(try await status(client, .get, "/v0/b/users/o?prefix=alice%2F", bob) == .forbidden)
            #expect(try await status(client, .delete, "/v0/b/users/o/alice%2Fa.jpg", bob) == .forbidden)
            // Without a token the rules see request.auth == null: 401, asking to sign in.
            try await client.execute(uri: "/v0/b/users/o/alice%2Fa.jpg", method: .get) { response in
                #expect(response.status == .unauthorized)
                let message = try errorMessage(response)
                #expect(message.contains("when not signed in"))
            }
            #expect(try await status(client, .delete, "/v0/b/users/o/alice%2Fa.jpg", alice) == .noContent)
        }
    }

    @Test func aPublicBucketIsReadWithoutAToken() async throws {
        let store = try TestStore(rules: homesPublicAdminAndSmallSpots)
        let (_, admin) = try await store.service.addUser("root", claims: ["admin": "true"])
        let (_, alice) = try await store.user("alice")
        let photo = try fixture("geotagged/rio.jpg")
        try await app(store).test(.router) { client in
            #expect(try await status(client, .put, "/v0/b/public/o/rio.jpg", admin, body: photo) == .ok)
            #expect(try await status(client, .put, "/v0/b/public/o/mine.jpg", alice, body: photo) == .forbidden)
            #expect(try await status(client, .put, "/v0/b/public/o/anon.jpg", nil, body: photo) == .unauthorized)
            try await client.execute(uri: "/v0/b/public/o/rio.jpg?alt=media", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == photo)
            }
            #expect(try await status(client, .get, "/v0/b/public/o/rio.jpg?alt=thumbnail&size=256") == .ok)
            #expect(try await status(client, .get, "/v0/b/public/o") == .ok)
            // A wrong token is still refused: it is not the same as no token.
            #expect(try await status(client, .get, "/v0/b/public/o/rio.jpg", "sst_wrong") == .unauthorized)
            #expect(try await status(client, .delete, "/v0/b/public/o/rio.jpg") == .unauthorized)
        }
    }

    @Test func anAdminClaimDeletesAnywhere() async throws {
        let store = try TestStore(rules: homesPublicAdminAndSmallSpots)
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let (_, admin) = try await store.service.addUser("root", claims: ["admin": "true"])
        let photo = try fixture("gps.jpg")
        try await app(store).test(.router) { client in
            #expect(try await status(client, .put, "/v0/b/spots/o/beach%2F1.jpg", alice, body: photo) == .ok)
            #expect(try await status(client, .put, "/v0/b/users/o/alice%2F1.jpg", alice, body: photo) == .ok)
            #expect(try await status(client, .delete, "/v0/b/spots/o/beach%2F1.jpg", bob) == .forbidden)
            // The admin may delete but not read alice's home folder.
            #expect(try await status(client, .get, "/v0/b/users/o/alice%2F1.jpg", admin) == .forbidden)
            #expect(try await status(client, .delete, "/v0/b/users/o/alice%2F1.jpg", admin) == .noContent)
            #expect(try await status(client, .delete, "/v0/b/spots/o/beach%2F1.jpg", admin) == .noContent)
            // Claims are read at each request: taking the claim away stops it at once.
            #expect(try await status(client, .put, "/v0/b/spots/o/beach%2F2.jpg", alice, body: photo) == .ok)
            _ = try await store.service.updateClaims(of: "root", ["admin": nil])
            #expect(try await status(client, .delete, "/v0/b/spots/o/beach%2F2.jpg", admin) == .forbidden)
        }
    }

    @Test func aSpotHoldsTwoJPEGsOfAtMostOneMiB() async throws {
        let store = try TestStore(rules: homesPublicAdminAndSmallSpots)
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let coffee = try fixture("photos/coffee.jpg")
        let big = coffee + [UInt8](repeating: 0, count: 1024 * 1024 + 1 - coffee.count)
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/s%2Fbig.jpg", method: .put, headers: auth(alice), body: ByteBuffer(bytes: big)) { response in
                #expect(response.status == .contentTooLarge)
                let message = try errorMessage(response)
                #expect(message.contains("1 MiB"))
            }
            #expect(try await status(client, .put, "/v0/b/spots/o/s%2Fa.png", alice, body: try fixture("alpha.png")) == .unsupportedMediaType)
            #expect(try await status(client, .put, "/v0/b/spots/o/s%2F1.jpg", alice, body: try fixture("gps.jpg")) == .ok)
            #expect(try await status(client, .put, "/v0/b/spots/o/s%2F2.jpg", bob, body: try fixture("gps.jpg")) == .forbidden)
            #expect(try await status(client, .put, "/v0/b/spots/o/s%2F2.jpg", alice, body: try fixture("geotagged/rio.jpg")) == .ok)
            try await client.execute(uri: "/v0/b/spots/o/s%2F3.jpg", method: .put, headers: auth(alice), body: ByteBuffer(bytes: try fixture("geotagged/paris.jpg"))) { response in
                #expect(response.status == .conflict)
                let message = try errorMessage(response)
                #expect(message.contains("the limit is 2"))
            }
            // Replacing one of the two is not a third.
            #expect(try await status(client, .put, "/v0/b/spots/o/s%2F2.jpg", alice, body: try fixture("geotagged/sydney.jpg")) == .ok)
        }
        #expect(try await store.service.catalog.spot(bucket: "spots", id: "s")?.objectCount == 2)
        #expect(try store.temporaryFiles().isEmpty)
    }

    /// The same limit written as Firebase conditions holds under concurrent uploads, because
    /// `spot.objects` counts the uploads in flight.
    @Test func conditionsOnSpotObjectsHoldUnderConcurrentUploads() async throws {
        let store = try TestStore(rules: """
            rules_version = '2';
            service firebase.storage {
              match /b/spots/o/{spotId}/{file} {
                allow create: if request.auth != null
                  && (spot == null || (spot.owner == request.auth.uid && spot.objects < 2))
                  && request.resource.size < 1 * 1024 * 1024
                  && request.resource.contentType.matches('image/.*');
              }
            }
            """)
        let (_, alice) = try await store.user("alice")
        let photo = try fixture("gps.jpg")
        let statuses = try await app(store).test(.router) { client in
            try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await status(client, .put, "/v0/b/spots/o/race%2F\(index).jpg", alice, body: photo, contentType: "image/jpeg")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(statuses.filter { $0 == .ok }.count == 2)
        #expect(statuses.filter { $0 == .forbidden }.count == 6)
        #expect(try await store.service.catalog.spot(bucket: "spots", id: "race")?.objectCount == 2)

        // The conditions are checked again on the real bytes: a body that is not an image,
        // sent as image/jpeg, or larger than declared, is refused after it is read.
        try await app(store).test(.router) { client in
            let text = Array("not an image".utf8)
            let notAnImage = try await status(client, .put, "/v0/b/spots/o/other%2Fnote.jpg", alice, body: text, contentType: "image/jpeg")
            #expect(notAnImage == .forbidden)
            // Without a content type the claim is application/octet-stream, refused before the body.
            let untyped = try await status(client, .put, "/v0/b/spots/o/other%2F1.jpg", alice, body: photo)
            #expect(untyped == .forbidden)
        }
        #expect(try await store.service.catalog.object(at: ObjectPath(bucket: "spots", name: "other/note.jpg")) == nil)
    }
}

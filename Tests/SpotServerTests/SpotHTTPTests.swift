import Foundation
import Hummingbird
import HummingbirdTesting
import SpotCore
import Testing
import TestSupport

/// `/v0/b/{bucket}/spots…`: finding spots by place, and the owner's overrides.
extension HTTPTests {
    @Test func findsSpotsByCityAccentInsensitiveAndNearAPoint() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            for (spot, file) in [("fort-point", "geotagged/san-francisco.jpg"), ("cristo", "geotagged/rio.jpg"), ("tower", "geotagged/paris.jpg")] {
                try await client.execute(uri: "/v0/b/spots/o/\(spot)%2F1.jpg", method: .put, headers: auth(token), body: ByteBuffer(bytes: try fixture(file))) { response in
                    #expect(response.status == .ok)
                    let photo = try #require(try json(response)["photo"] as? [String: Any])
                    let location = try #require(photo["location"] as? [String: Any])
                    #expect(location["city"] is String && location["countryCode"] is String && location["distanceKm"] is Double)
                }
            }
            try await client.execute(uri: "/v0/b/spots/spots?city=san%20francisco", method: .get, headers: auth(token)) { response in
                #expect(response.status == .ok)
                let spots = try #require(try json(response)["spots"] as? [[String: Any]])
                #expect(spots.map { $0["id"] as? String } == ["fort-point"])
                #expect(spots.first?["city"] as? String == "San Francisco")
                #expect(spots.first?["photoCount"] as? Int == 1)
                #expect((spots.first?["thumbnails"] as? [String: String])?["256"]?.contains("fort-point%2F1.jpg?alt=thumbnail&size=256") == true)
            }
            try await client.execute(uri: "/v0/b/spots/spots?near=-22.95,-43.21&radiusKm=50", method: .get, headers: auth(token)) { response in
                let spots = try #require(try json(response)["spots"] as? [[String: Any]])
                #expect(spots.map { $0["id"] as? String } == ["cristo"])
                #expect(spots.first?["distanceKm"] is Double)
            }
            for bad in ["", "?city=x&near=1,2", "?near=abc", "?near=1,2&radiusKm=-1", "?city=x&pageToken=%21%21"] {
                try await client.execute(uri: "/v0/b/spots/spots\(bad)", method: .get, headers: auth(token)) { response in
                    #expect(response.status == .badRequest, "\(bad)")
                }
            }
        }
    }

    @Test func theOwnerOverridesNameDescriptionAndCity() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/tower%2F1.jpg", method: .put, headers: auth(alice), body: ByteBuffer(bytes: try fixture("geotagged/paris.jpg"))) { response in
                #expect(response.status == .ok)
            }
            let patch = ByteBuffer(string: #"{"name": "Iron Lady", "city": "Lutèce"}"#)
            try await client.execute(uri: "/v0/b/spots/spots/tower", method: .patch, headers: auth(bob), body: patch) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v0/b/spots/spots/tower", method: .patch, headers: auth(alice), body: ByteBuffer(string: "not json")) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: "/v0/b/spots/spots/nowhere", method: .patch, headers: auth(alice), body: patch) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/v0/b/spots/spots/tower", method: .patch, headers: auth(alice), body: patch) { response in
                #expect(response.status == .ok)
                let spot = try json(response)
                #expect(spot["name"] as? String == "Iron Lady")
                #expect(spot["city"] as? String == "Lutèce")
                #expect(spot["cityOverridden"] as? Bool == true)
            }
            try await client.execute(uri: "/v0/b/spots/spots/tower", method: .get, headers: auth(bob)) { response in
                let spot = try json(response)
                #expect(spot["city"] as? String == "Lutèce")
                #expect((spot["location"] as? [String: Any])?["latitude"] is Double)
            }
            try await client.execute(uri: "/v0/b/spots/spots?city=lutece", method: .get, headers: auth(bob)) { response in
                let page = try json(response)
                #expect((page["spots"] as? [[String: Any]])?.count == 1)
            }
        }
    }
}

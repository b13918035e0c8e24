import Foundation
import Hummingbird
import HummingbirdTesting
import SpotCore
import SpotService
import Testing
import TestSupport

/// `/v0/admin/rules…` and `/v0/admin/stats`: the rules in force, the playground deciding with
/// them, and the store's statistics, for admins only.
extension HTTPTests {
    @Test func thePlaygroundDecidesWithTheRulesInForceAndTheStoresFacts() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let root = try await store.admin("root")
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/tower%2F1.jpg", method: .put, headers: auth(alice), body: ByteBuffer(bytes: try fixture("geotagged/paris.jpg"))) {
                response in #expect(response.status == .ok)
            }
            func decide(_ body: String, as token: String = root) async throws -> (HTTPResponse.Status, [String: Any]) {
                try await client.execute(uri: "/v0/admin/rules/decide", method: .post, headers: auth(token), body: ByteBuffer(string: body)) { response in
                    (response.status, try json(response))
                }
            }
            // The spot is alice's (from the store): bob may not add to it, alice may.
            let (status, bob) = try await decide(#"{"uid": "bob", "operation": "write", "path": "spots/tower/2.jpg", "size": 1000, "contentType": "image/jpeg"}"#)
            #expect(status == .ok)
            #expect(bob["operation"] as? String == "create" && bob["allowed"] as? Bool == false)
            let (_, owner) = try await decide(#"{"uid": "alice", "operation": "write", "path": "spots/tower/2.jpg", "size": 1000, "contentType": "image/jpeg"}"#)
            #expect(owner["allowed"] as? Bool == true)
            #expect((owner["rule"] as? String)?.contains("allow create") == true)
            #expect((owner["limits"] as? String)?.contains("objects 4 per spot") == true)
            // An existing object makes a write an update; the limits refuse what is too large.
            let (_, replace) = try await decide(#"{"uid": "alice", "operation": "write", "path": "spots/tower/1.jpg", "size": 9000000, "contentType": "image/jpeg"}"#)
            #expect(replace["operation"] as? String == "update" && replace["allowed"] as? Bool == false)
            #expect((replace["explanation"] as? String)?.contains("limits refuse") == true)
            let (_, anonymous) = try await decide(#"{"operation": "read", "path": "spots/tower/1.jpg"}"#)
            #expect(anonymous["operation"] as? String == "get" && anonymous["allowed"] as? Bool == false)

            for bad in [#"{"operation": "steal", "path": "spots/a/b"}"#, #"{"operation": "read", "path": "../x"}"#, "not json", #"{"uid": "", "operation": "read", "path": "spots/a"}"#,
                        #"{"operation": "write", "path": "spots/a/b.jpg", "size": -5}"#, #"{"operation": "write", "path": "spots/a/b.jpg", "spotObjects": -1}"#,
                        #"{"operation": "write", "path": "spots/a/b.jpg", "spotOwner": ""}"#] {
                let (status, _) = try await decide(bad)
                #expect(status == .badRequest, "\(bad)")
            }
            let (refused, _) = try await decide(#"{"operation": "read", "path": "spots/tower/1.jpg"}"#, as: alice)
            #expect(refused == .forbidden)
            try await client.execute(uri: "/v0/admin/rules", method: .get, headers: auth(alice)) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v0/admin/rules", method: .get, headers: auth(root)) { response in
                #expect(response.status == .ok)
                let text = try json(response)["text"] as? String
                #expect(text == store.rules.rulesText)
            }
        }
    }

    @Test func theStoresStatisticsAreForAdminsOnly() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let root = try await store.admin("root")
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/tower%2F1.jpg", method: .put, headers: auth(alice), body: ByteBuffer(bytes: try fixture("geotagged/paris.jpg"))) {
                response in #expect(response.status == .ok)
            }
            try await client.execute(uri: "/v0/admin/stats", method: .get, headers: auth(alice)) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v0/admin/stats", method: .get) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/v0/admin/stats", method: .get, headers: auth(root)) { response in
                #expect(response.status == .ok)
                let stats = try json(response)
                #expect(stats["objects"] as? Int == 1)
                #expect((stats["buckets"] as? [[String: Any]])?.map { $0["name"] as? String } == ["spots"])
            }
        }
    }
}

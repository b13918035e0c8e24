import Foundation
import Hummingbird
import HummingbirdTesting
import SpotCore
import SpotServer
import Testing
import TestSupport

/// The admin API as an app backend uses it, through a real server: only holders of the
/// admin role (granted from the command line) get in, and every action is logged.
extension OperationsTests {
    static let adminRoutes: [(HTTPRequest.Method, String)] = [
        (.post, "/v0/admin/users"), (.get, "/v0/admin/users"), (.get, "/v0/admin/users/alice"),
        (.delete, "/v0/admin/users/alice"), (.patch, "/v0/admin/users/alice/claims"),
        (.post, "/v0/admin/users/alice/tokens"), (.delete, "/v0/admin/users/alice/tokens"),
    ]

    @Test func onlyHoldersOfTheAdminRoleGetIn() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        // A claim named admin is for the rules; it does not grant the role.
        _ = try await store.service.updateClaims(of: "alice", ["admin": "true"])
        try await app(store).test(.router) { client in
            for (method, uri) in Self.adminRoutes {
                let body = ByteBuffer(string: #"{"uid": "mallory", "claims": {"team": "red"}}"#)
                try await client.execute(uri: uri, method: method, headers: auth(alice), body: body) { response in
                    #expect(response.status == .forbidden, "\(method) \(uri)")
                    #expect(String(buffer: response.body).contains("does not hold the admin role"))
                }
                try await client.execute(uri: uri, method: method, body: body) { response in
                    #expect(response.status == .unauthorized, "\(method) \(uri)")
                }
            }
        }
        #expect(try await store.service.users().map(\.uid) == ["alice"], "nothing was created")
        #expect(try await store.service.user("alice").tokenCount == 1, "nothing was revoked")
    }

    @Test func anAppBackendManagesUsersThroughTheAdminAPI() async throws {
        let store = try TestStore()
        let ops = try await store.admin("ops")
        let records = LogRecords()
        try await app(store, records: records).test(.router) { client in
            func call(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, token: String? = nil) async throws -> (HTTPResponse.Status, [String: Any]) {
                try await client.execute(uri: uri, method: method, headers: auth(token ?? ops), body: body.map { ByteBuffer(string: $0) }) { response in
                    let json = response.body.readableBytes == 0 ? [:] : (try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any] ?? [:])
                    return (response.status, json)
                }
            }
            // Create: the token works at once, the claims reach the rules.
            let (created, carol) = try await call(.post, "/v0/admin/users", #"{"uid": "carol", "claims": {"team": "blue"}}"#)
            #expect(created == .created)
            let token = try #require(carol["token"] as? String)
            #expect((carol["user"] as? [String: Any])?["claims"] as? [String: String] == ["team": "blue"])
            let photo = ByteBuffer(bytes: try fixture("photos/coffee.jpg"))
            let uploadToken = try await client.execute(uri: "/v0/b/users/o/carol%2Fa.jpg", method: .put, headers: auth(token), body: photo) { response in
                #expect(response.status == .ok)
                return try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])["downloadTokens"] as? String
            }
            #expect(try await call(.post, "/v0/admin/users", #"{"uid": "carol"}"#).0 == .conflict)
            #expect(try await call(.post, "/v0/admin/users", #"{"uid": "no spaces"}"#).0 == .badRequest)
            #expect(try await call(.post, "/v0/admin/users", #"{"name": "carol"}"#).0 == .badRequest)

            // Claims: set one, remove one.
            let (patched, user) = try await call(.patch, "/v0/admin/users/carol/claims", #"{"claims": {"level": "3", "team": null}}"#)
            #expect(patched == .ok && user["claims"] as? [String: String] == ["level": "3"])
            #expect(try await call(.patch, "/v0/admin/users/nobody/claims", #"{"claims": {"a": "b"}}"#).0 == .notFound)

            // Tokens: another one, then revoke them all.
            let (issued, second) = try await call(.post, "/v0/admin/users/carol/tokens")
            #expect(issued == .ok)
            let secondToken = try #require(second["token"] as? String)
            #expect(try await call(.get, "/v0/admin/users/carol").1["tokenCount"] as? Int == 2)
            #expect(try await call(.delete, "/v0/admin/users/carol/tokens?downloadTokens=all").0 == .badRequest)
            #expect(try await call(.delete, "/v0/admin/users/carol/tokens").0 == .noContent)
            let media = "/v0/b/users/o/carol%2Fa.jpg?alt=media&token=\(try #require(uploadToken))"
            #expect(try await client.execute(uri: media, method: .get).status == .ok, "the upload's token belongs to the object")
            #expect(try await call(.delete, "/v0/admin/users/carol/tokens?downloadTokens=replace").0 == .noContent)
            #expect(try await client.execute(uri: media, method: .get).status == .forbidden, "replaced")
            for revoked in [token, secondToken] {
                try await client.execute(uri: "/v0/b/users/o/carol%2Fa.jpg", method: .get, headers: auth(revoked)) { response in
                    #expect(response.status == .unauthorized)
                }
            }

            // Paging covers every user once, in uid order.
            for uid in ["dora", "emil", "fay"] { #expect(try await call(.post, "/v0/admin/users", #"{"uid": "\#(uid)"}"#).0 == .created) }
            var seen: [String] = []
            var pageToken: String?
            repeat {
                let query = "maxResults=2" + (pageToken.map { "&pageToken=\($0)" } ?? "")
                let (status, page) = try await call(.get, "/v0/admin/users?\(query)")
                #expect(status == .ok)
                seen += (page["users"] as? [[String: Any]] ?? []).compactMap { $0["uid"] as? String }
                pageToken = page["nextPageToken"] as? String
            } while pageToken != nil
            #expect(seen == ["carol", "dora", "emil", "fay", "ops"])
            #expect(try await call(.get, "/v0/admin/users?maxResults=0").0 == .badRequest)

            // Delete: the user goes, the objects stay.
            #expect(try await call(.delete, "/v0/admin/users/carol").0 == .noContent)
            #expect(try await call(.get, "/v0/admin/users/carol").0 == .notFound)
            #expect(try await call(.delete, "/v0/admin/users/carol").0 == .notFound)
        }
        #expect(try await store.service.statistics().objectsOfDeletedUsers == 1)
        let actions = records.all.filter { $0.message == "admin action" }
        #expect(actions.allSatisfy { $0.metadata["by"] == "ops" })
        #expect(actions.map { "\($0.metadata["action"] ?? "") \($0.metadata["uid"] ?? "")" } == [
            "create user carol", "update claims carol", "issue token carol", "revoke tokens carol", "revoke tokens carol",
            "replace download tokens carol", "create user dora", "create user emil", "create user fay", "delete user carol",
        ])
    }
}

import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import Logging
import SpotServer
import SpotService
import SpotCore
import Testing
import TestSupport

/// The console's doors: its files and their headers, sign-in by token and by one-time link
/// into a cookie session, what the cookie may do, and sign-out.
extension HTTPTests {
    static let console: HTTPFields = [HTTPField.Name("X-SpotStore-Console")!: "1"]

    /// The `name=value` of the session cookie a response sets.
    func sessionCookie(_ response: TestResponse) throws -> String {
        let setCookie = try #require(response.headers[.setCookie])
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/"))
        return try #require(setCookie.split(separator: ";").first.map(String.init))
    }

    @Test func theConsoleIsServedWithAPolicyThatRunsOnlyItsOwnScriptsAndIsNeverFramed() async throws {
        let store = try TestStore()
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/console/")
            }
            let etag = try await client.execute(uri: "/console/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                let policy = try #require(response.headers[.contentSecurityPolicy])
                #expect(policy.contains("script-src 'self';") && !policy.contains("unsafe-inline") && policy.contains("frame-ancestors 'none'"))
                #expect(policy.contains("img-src 'self' data: blob: https://tile.openstreetmap.org;"))
                #expect(response.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
                #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                let page = String(buffer: response.body)
                #expect(page.contains(#"<script type="module" src="/console/app.js"></script>"#))
                #expect(!page.contains("<script>"), "no inline script")
                return try #require(response.headers[.eTag])
            }
            try await client.execute(uri: "/console/", method: .get, headers: [.ifNoneMatch: etag]) { response in
                #expect(response.status == .notModified)
            }
            try await client.execute(uri: "/console/app.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
            }
            for missing in ["/console/nothing.js", "/console/../Package.swift", "/console/%2e%2e/%2e%2e/etc/passwd"] {
                try await client.execute(uri: missing, method: .get) { response in
                    #expect(response.status == .notFound, "\(missing)")
                }
            }
        }
    }

    @Test func aTokenOrAOneTimeLinkStartsACookieSessionThatSignsOutEverywhere() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/session", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "{}", "nobody signed in")
            }
            // Without the console's header, no session starts.
            try await client.execute(uri: "/v0/session", method: .post, headers: auth(token)) { response in
                #expect(response.status == .forbidden)
                #expect(response.headers[.setCookie] == nil)
            }
            try await client.execute(uri: "/v0/session", method: .post, headers: Self.console.merging([.authorization: "Bearer sst_wrong"])) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.setCookie] == nil)
            }
            let cookie = try await client.execute(uri: "/v0/session", method: .post, headers: Self.console.merging(auth(token))) { response in
                #expect(response.status == .ok)
                #expect((try json(response)["user"] as? [String: Any])?["uid"] as? String == "alice")
                return try sessionCookie(response)
            }
            try await client.execute(uri: "/v0/session", method: .get, headers: [.cookie: cookie]) { response in
                #expect(response.status == .ok)
                let user = try json(response)["user"] as? [String: Any]
                #expect(user?["uid"] as? String == "alice")
            }

            // A link works once.
            let (secret, _) = try await store.service.makeSignInLink(for: "alice")
            let body = ByteBuffer(string: #"{"link": "\#(secret)"}"#)
            let linked = try await client.execute(uri: "/v0/session", method: .post, headers: Self.console, body: body) { response in
                #expect(response.status == .ok)
                return try sessionCookie(response)
            }
            try await client.execute(uri: "/v0/session", method: .post, headers: Self.console, body: body) { response in
                #expect(response.status == .unauthorized)
                let message = try errorMessage(response)
                #expect(message.contains("used already"))
            }
            try await client.execute(uri: "/v0/session", method: .post, headers: Self.console, body: ByteBuffer(string: "{}")) { response in
                #expect(response.status == .badRequest)
            }

            // Signing out ends that session only, for every server of the store, and drops the cookie.
            try await client.execute(uri: "/v0/session", method: .delete, headers: [.cookie: linked]) { response in
                #expect(response.status == .forbidden, "a change needs the console's header")
            }
            try await client.execute(uri: "/v0/session", method: .delete, headers: Self.console.merging([.cookie: linked])) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.setCookie]?.contains("Max-Age=0") == true)
            }
            try await client.execute(uri: "/v0/session", method: .get, headers: [.cookie: linked]) { response in
                #expect(response.status == .unauthorized)
            }
            #expect(try await store.service.catalog.user(sessionDigest: Tokens.digest(of: String(linked.dropFirst("spotstore_session=".count))), at: Date()) == nil)
            try await client.execute(uri: "/v0/session", method: .get, headers: [.cookie: cookie]) { response in
                #expect(response.status == .ok, "the other session goes on")
            }
        }
    }

    @Test func aCookieSignsInReadsButChangesOnlyWithTheConsolesHeaderAndEndsWithItsUser() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            let cookie = try await client.execute(uri: "/v0/session", method: .post, headers: Self.console.merging(auth(token))) { try sessionCookie($0) }
            let object = "/v0/b/users/o/alice%2Fnote.txt"
            try await client.execute(uri: object, method: .put, headers: [.cookie: cookie, .contentType: "text/plain"], body: ByteBuffer(string: "hi")) { response in
                #expect(response.status == .forbidden)
                let message = try errorMessage(response)
                #expect(message.contains("X-SpotStore-Console"))
            }
            #expect(try await store.service.catalog.object(at: ObjectPath(bucket: "users", name: "alice/note.txt")) == nil)
            try await client.execute(uri: object, method: .put, headers: Self.console.merging([.cookie: cookie, .contentType: "text/plain"]), body: ByteBuffer(string: "hi")) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "\(object)?alt=media", method: .get, headers: [.cookie: cookie]) { response in
                #expect(String(buffer: response.body) == "hi")
            }
            try await client.execute(uri: "/v0/b/users/o?prefix=alice%2F", method: .get, headers: [.cookie: cookie]) { response in
                #expect(response.status == .ok)
            }
            // A revoked user's session stops at once.
            try await store.service.revokeTokens(of: "alice")
            try await client.execute(uri: "\(object)?alt=media", method: .get, headers: [.cookie: cookie]) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/v0/session", method: .get, headers: [.cookie: "spotstore_session=sss_forged"]) { response in
                #expect(response.status == .unauthorized)
            }
        }
    }

    @Test func aSessionBegunOnOneServerWorksOnAnotherAndSigningOutThereEndsItOnBoth() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let second = SpotServer.makeApplication(
            service: try store.otherInstance("second"), configuration: .init(host: "127.0.0.1", port: 0), logger: Logger(label: "test"))
        let cookie = try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/session", method: .post, headers: Self.console.merging(auth(token))) { try sessionCookie($0) }
        }
        try await second.test(.router) { client in
            try await client.execute(uri: "/v0/session", method: .get, headers: [.cookie: cookie]) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/v0/session", method: .delete, headers: Self.console.merging([.cookie: cookie])) { response in
                #expect(response.status == .noContent)
            }
        }
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/session", method: .get, headers: [.cookie: cookie]) { response in
                #expect(response.status == .unauthorized)
            }
        }
    }

    @Test func anUploadedScriptOrStyleSheetIsNeverLoadedAsOne() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            for (name, type) in [("x.js", "text/javascript"), ("x.css", "text/css")] {
                let object = "/v0/b/users/o/alice%2F\(name)"
                try await client.execute(uri: object, method: .put, headers: auth(token).merging([.contentType: type]), body: ByteBuffer(string: "alert(1)")) { response in
                    #expect(response.status == .ok)
                }
                for destination in ["script", "style", "worker", "serviceworker"] {
                    try await client.execute(uri: "\(object)?alt=media", method: .get, headers: auth(token).merging([HTTPField.Name("Sec-Fetch-Dest")!: destination])) { response in
                        #expect(response.status == .forbidden, "\(name) as a \(destination)")
                    }
                }
                for destination in ["empty", "document", "image"] {
                    try await client.execute(uri: "\(object)?alt=media", method: .get, headers: auth(token).merging([HTTPField.Name("Sec-Fetch-Dest")!: destination])) { response in
                        #expect(response.status == .ok, "\(name) fetched as \(destination)")
                        #expect(response.headers[.contentDisposition]?.hasPrefix("attachment") == true)
                    }
                }
            }
        }
    }
}

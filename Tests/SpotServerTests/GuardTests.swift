import Foundation
import Hummingbird
import HummingbirdTesting
import SpotCore
import Testing
import TestSupport
@testable import SpotServer

@Suite struct FailedAuthenticationLimiterTests {
    @Test func blocksAnAddressAfterItsFailuresUntilTheyAgeOut() async throws {
        let limiter = FailedAuthenticationLimiter(maxFailures: 3)
        for second in 0..<3 {
            try limiter.check("10.0.0.1", now: Double(second))
            limiter.recordFailure("10.0.0.1", now: Double(second))
        }
        let blocked = SpotError(.rateLimited, "too many failed sign-ins from 10.0.0.1; wait a minute and retry with a valid token")
        #expect(throws: blocked) { try limiter.check("10.0.0.1", now: 3) }
        try limiter.check("10.0.0.2", now: 3)  // other addresses are not affected
        #expect(throws: blocked) { try limiter.check("10.0.0.1", now: 59.5) }
        try limiter.check("10.0.0.1", now: 60.5)  // the first failure aged out of the minute
    }
}

extension HTTPTests {
    @Test func repeatedWrongTokensGet429EvenWithARightOneAfterwards() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let statuses = try await app(store, configuration: .init(host: "127.0.0.1", port: 0, maxFailedAuthentications: 3)).test(.live) { client in
            var statuses: [HTTPResponse.Status] = []
            for guess in ["sst_a", "sst_b", "sst_c", "sst_d"] {
                statuses.append(try await client.execute(uri: "/v0/b/spots/o?prefix=", method: .get, headers: auth(guess)) { $0.status })
            }
            statuses.append(try await client.execute(uri: "/v0/b/spots/o?prefix=", method: .get, headers: auth(token)) { response in
                #expect(response.headers[.retryAfter] == "60")
                return response.status
            })
            return statuses
        }
        #expect(statuses == [.unauthorized, .unauthorized, .unauthorized, .tooManyRequests, .tooManyRequests])
    }

    @Test func theBearerSchemeIsCaseInsensitiveAndTheTokenTrimmedOfSpacesAndTabs() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            let headers = ["Bearer \(token)", "bearer \(token)", "BEARER \t \(token) \t", "Bearer \(token)x", "Basic \(token)", "Bearer ", "Bearer"]
            var statuses: [HTTPResponse.Status] = []
            for header in headers {
                statuses.append(try await client.execute(uri: "/v0/b/spots/o?prefix=", method: .get, headers: [.authorization: header]) { $0.status })
            }
            #expect(statuses == [.ok, .ok, .ok, .unauthorized, .unauthorized, .unauthorized, .unauthorized])
        }
    }

    @Test func corsAnswersListedOriginsOnly() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, corsOrigins: ["https://app.example.com"])
        try await app(store, configuration: configuration).test(.router) { client in
            let preflight: HTTPFields = [.origin: "https://app.example.com", .accessControlRequestMethod: "PUT"]
            try await client.execute(uri: "/v0/b/spots/o/a%2F1.jpg", method: .options, headers: preflight) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.accessControlAllowOrigin] == "https://app.example.com")
                #expect(response.headers[.accessControlAllowHeaders]?.contains("Authorization") == true)
            }
            var headers = auth(token)
            headers[.origin] = "https://app.example.com"
            try await client.execute(uri: "/v0/b/spots/o?prefix=", method: .get, headers: headers) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.accessControlAllowOrigin] == "https://app.example.com")
            }
            headers[.origin] = "https://evil.example.net"
            try await client.execute(uri: "/v0/b/spots/o?prefix=", method: .get, headers: headers) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
        }
    }
}

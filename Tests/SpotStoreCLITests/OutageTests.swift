import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

extension BinaryTests {
    /// PostgreSQL or the S3 server gone for a while (a relay in front of each, stopped and
    /// started again on the same port; the shared servers stay up): requests get 503 with
    /// `Retry-After` soon, `/healthz?deep=1` names the backend, and once it is back the same
    /// server process serves again.
    @Suite struct OutageTests {
        /// The longest a request may take to be refused while a backend is gone. Loose: how
        /// fast belongs in benchmarks; this catches hangs and minute-long waits.
        static let refusalBound: Duration = .seconds(15)
        /// How long the server may take to serve again once a backend is back.
        static let recoveryBound: Duration = .seconds(60)

        @Test(.enabled(if: TestServers.s3Enabled && PostgresTestServer.isEnabled), .timeLimit(.minutes(5)))
        func aBackendThatGoesAwayGets503WithRetryAfterAndServiceResumesOnceItIsBack() async throws {
            try await StoreBackend.postgresAndS3.withEnvironment(outages)
        }

        func outages(environment direct: [String: String]) async throws {
            var environment = direct
            let postgres = try Self.relay(&environment, "SPOTSTORE_CATALOG")
            defer { postgres.stop() }
            let s3 = try Self.relay(&environment, "SPOTSTORE_S3_ENDPOINT")
            defer { s3.stop() }

            let store = try RulesCommandTests.temporaryDirectory() + "/storage"
            let token = try RulesCommandTests.addUser("alice", store: store, environment: environment)
            let (server, url) = try await BinaryTests.startServer(store: store, environment: environment)
            defer { server.terminate() }
            let photo = try fixture("photos/coffee.jpg")
            let stored = "\(url)/v0/b/spots/o/cafe%2Fcoffee.jpg"
            #expect(try await DiskFullTests.request("PUT", stored, token: token, body: photo).0 == 200)
            #expect(try await DiskFullTests.request("GET", stored + "?alt=media", token: token) == (200, photo))
            let health = try await Self.health(url)
            #expect(health.status == 200 && health.retryAfter == nil)
            #expect(health.backends["catalog"]?["kind"] as? String == "postgresql" && health.backends["blobs"]?["kind"] as? String == "s3")
            #expect(health.backends["catalog"]?["status"] as? String == "ok" && health.backends["blobs"]?["status"] as? String == "ok")

            // PostgreSQL goes away: whatever needs the catalog is refused, soon.
            postgres.stop()
            for (method, target, body) in [("GET", stored, nil), ("GET", stored + "?alt=media", nil), ("PUT", "\(url)/v0/b/spots/o/cafe%2Flate.jpg", photo)] {
                try await Self.expectRefused(method, target, token: token, body: body, naming: "PostgreSQL")
            }
            try await Self.expectUnhealthy(url, "catalog", naming: "PostgreSQL", healthy: "blobs")

            // Back: the same server serves again.
            try postgres.restart()
            try await Self.expectServedAgain(url, stored, token: token, photo: photo)

            // The S3 server goes away: reads and uploads of bytes are refused, soon; metadata is still served.
            s3.stop()
            try await Self.expectRefused("GET", stored + "?alt=media", token: token, body: nil, naming: "S3")
            try await Self.expectRefused("PUT", "\(url)/v0/b/spots/o/cafe%2Flater.jpg", token: token, body: photo, naming: "S3")
            #expect(try await DiskFullTests.request("GET", stored, token: token).0 == 200, "metadata needs only the catalog")
            try await Self.expectUnhealthy(url, "blobs", naming: "S3", healthy: "catalog")

            try s3.restart()
            try await Self.expectServedAgain(url, stored, token: token, photo: photo)
            #expect(server.isRunning)
        }

        /// A relay to the server of the URL in `environment[variable]`, which then names the relay.
        static func relay(_ environment: inout [String: String], _ variable: String) throws -> TCPRelay {
            let text = try #require(environment[variable])
            var url = try #require(URLComponents(string: text))
            let relay = try TCPRelay(to: "\(try #require(url.host)):\(try #require(url.port))")
            url.port = relay.port
            environment[variable] = url.string
            return relay
        }

        /// Expects `method` of `url` to be answered 503 with `Retry-After` and a message naming
        /// `backend`, within `refusalBound`.
        static func expectRefused(_ method: String, _ url: String, token: String, body: [UInt8]?, naming backend: String) async throws {
            let clock = ContinuousClock()
            let started = clock.now
            let (status, answer, response) = try await DiskFullTests.exchange(method, url, token: token, body: body)
            let took = clock.now - started
            let message = String(decoding: answer, as: UTF8.self)
            #expect(status == 503, "\(method) \(url): \(status) \(message)")
            #expect(response?.value(forHTTPHeaderField: "Retry-After") != nil, "\(method) \(url)")
            #expect(message.contains(backend), "\(method) \(url): \(message)")
            #expect(took < refusalBound, "\(method) \(url) took \(took)")
        }

        /// Polls (within `recoveryBound`) until the object can be read again, then expects an
        /// upload and a deep health check to succeed.
        static func expectServedAgain(_ url: String, _ stored: String, token: String, photo: [UInt8]) async throws {
            let served = try await RulesCommandTests.eventually(within: recoveryBound) {
                try await DiskFullTests.request("GET", stored + "?alt=media", token: token) == (200, photo)
            }
            #expect(served, "the object is served again once the backend is back")
            let upload = try await DiskFullTests.request("PUT", "\(url)/v0/b/spots/o/cafe%2Fagain-\(UUID().uuidString).jpg", token: token, body: photo)
            #expect(upload.0 == 200, "\(String(decoding: upload.1, as: UTF8.self))")
            #expect(try await health(url).status == 200)
        }

        /// `GET /healthz?deep=1`: status, `Retry-After`, and the entries of the backends by name (`catalog`, `blobs`).
        static func health(_ url: String) async throws -> (status: Int, retryAfter: String?, backends: [String: [String: Any]]) {
            let (status, body, response) = try await DiskFullTests.exchange("GET", "\(url)/healthz?deep=1", token: nil)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            return (status, response?.value(forHTTPHeaderField: "Retry-After"), json.compactMapValues { $0 as? [String: Any] })
        }

        /// Expects a deep health check to answer 503 with `Retry-After`, the backend `failing`
        /// unavailable with a message naming `server`, and `healthy` fine.
        static func expectUnhealthy(_ url: String, _ failing: String, naming server: String, healthy: String) async throws {
            let health = try await health(url)
            #expect(health.status == 503 && health.retryAfter != nil)
            #expect(health.backends[failing]?["status"] as? String == "unavailable" && health.backends[healthy]?["status"] as? String == "ok")
            #expect((health.backends[failing]?["message"] as? String)?.contains(server) == true, "\(health.backends)")
        }
    }
}

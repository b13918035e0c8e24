import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

extension BinaryTests {
    /// Two `spotstore serve` processes on one store, with the CLI beside them: every rule
    /// and limit holds across processes, a revoke and a signed URL reach both servers.
    @Suite struct TwoServerTests {
        @Test(arguments: StoreBackend.all)
        func twoServersOnOneStoreShareOwnershipLimitsRevocationAndSignedURLs(_ backend: StoreBackend) async throws {
            try await backend.withEnvironment(twoServers)
        }

        func twoServers(environment: [String: String]) async throws {
            let root = try RulesCommandTests.temporaryDirectory()
            let store = root + "/storage"
            let alice = try RulesCommandTests.addUser("alice", store: store, environment: environment)
            let bob = try RulesCommandTests.addUser("bob", store: store, environment: environment)
            let (first, firstURL) = try await BinaryTests.startServer(store: store, environment: environment)
            defer { first.terminate() }
            let (second, secondURL) = try await BinaryTests.startServer(store: store, environment: environment)
            defer { second.terminate() }
            let photo = try fixture("photos/coffee.jpg")
            let put = DiskFullTests.request

            // Alice through one server and Bob through the other, into the same new spot at once.
            for round in 0..<10 {
                async let a = put("PUT", "\(firstURL)/v0/b/spots/o/race-\(round)%2Fa.jpg", alice, photo)
                async let b = put("PUT", "\(secondURL)/v0/b/spots/o/race-\(round)%2Fb.jpg", bob, photo)
                let statuses = [try await a.0, try await b.0]
                #expect(statuses.sorted() == [200, 403], "round \(round): \(statuses)")
                let (status, body) = try await put("GET", "\(secondURL)/v0/b/spots/o?prefix=race-\(round)%2F", alice, nil)
                #expect(status == 200 && String(decoding: body, as: UTF8.self).components(separatedBy: "\"owner\"").count == 2)
            }

            // 16 uploads into one empty spot, split across the servers: exactly 4 stored.
            let outcomes = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<16 {
                    let base = index.isMultiple(of: 2) ? firstURL : secondURL
                    group.addTask { try await put("PUT", "\(base)/v0/b/spots/o/full%2F\(index).jpg", alice, photo).0 }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == 200 }.count == 4 && outcomes.filter { $0 == 409 }.count == 12, "\(outcomes.sorted())")

            // A URL signed by one server works on the other.
            let (_, listing) = try await put("GET", "\(secondURL)/v0/b/spots/o?prefix=full%2F", alice, nil)
            let items = try #require(try JSONSerialization.jsonObject(with: Data(listing)) as? [String: Any])["items"] as? [[String: Any]]
            let stored = try #require(items?.first?["name"] as? String).replacingOccurrences(of: "/", with: "%2F")
            let (signStatus, signed) = try await put("GET", "\(firstURL)/v0/b/spots/o/\(stored)?alt=signedUrl", alice, nil)
            #expect(signStatus == 200, "\(String(decoding: signed, as: UTF8.self))")
            let signedURL = try #require(try JSONSerialization.jsonObject(with: Data(signed)) as? [String: Any])["url"] as? String
            let onSecond = try #require(signedURL?.replacingOccurrences(of: firstURL, with: secondURL))
            let (downloaded, response) = try await URLSession.shared.data(from: try #require(URL(string: onSecond)))
            #expect((response as? HTTPURLResponse)?.statusCode == 200 && [UInt8](downloaded) == photo)

            // The backends' own metrics reach /metrics: catalog transactions and S3 requests.
            let metrics = String(decoding: try await URLSession.shared.data(from: try #require(URL(string: "\(firstURL)/metrics"))).0, as: UTF8.self)
            if environment["SPOTSTORE_BLOBS"] != nil {
                #expect(metrics.contains(#"spotstore_s3_requests_total{operation="PutObject",status="200"}"#), "\(metrics)")
                #expect(metrics.contains(#"spotstore_s3_request_duration_seconds_count{operation="PutObject"}"#))
            }
            if environment["SPOTSTORE_CATALOG"] != nil {
                #expect(metrics.contains(#"spotstore_catalog_transactions_total{kind="write",outcome="ok"}"#), "\(metrics)")
            }

            // A revoke through the CLI reaches both servers. On SQLite at once: the first request
            // after the CLI exits is refused (the WAL index is shared memory, no timing involved).
            // On PostgreSQL it arrives by LISTEN/NOTIFY (a staleness bound of 1 s); a busy machine
            // can take longer than that to run the servers, so the test waits for the refusal
            // with a generous deadline instead of timing it.
            #expect(try await put("GET", "\(firstURL)/v0/b/spots/o?prefix=full%2F", bob, nil).0 == 200)
            #expect(try await put("GET", "\(secondURL)/v0/b/spots/o?prefix=full%2F", bob, nil).0 == 200)
            #expect(try BinaryTests.run(["users", "revoke", "bob", "--store", store], environment: environment).status == 0)
            let revoked = ContinuousClock.now
            let deadline: Duration = environment["SPOTSTORE_CATALOG"] == nil ? .zero : .seconds(60)
            for url in [firstURL, secondURL] {
                var statuses: [Int] = []
                let refused = try await waitUntil(within: deadline) {
                    statuses.append(try await put("GET", "\(url)/v0/b/spots/o?prefix=full%2F", bob, nil).0)
                    return statuses.last != 200
                }
                #expect(refused && statuses.last == 401,
                        "\(url) answered bob \(Set(statuses).sorted()) for \(ContinuousClock.now - revoked) after the revoke (deadline \(deadline))")
            }

            // Restarting one server leaves the other's temp directory alone; fsck is clean.
            first.terminate()
            first.waitUntilExit()
            let (again, againURL) = try await BinaryTests.startServer(store: store, environment: environment)
            defer { again.terminate() }
            #expect(try await put("GET", "\(againURL)/v0/b/spots/o?prefix=full%2F", alice, nil).0 == 200)
            let fsck = try BinaryTests.run(["fsck", "--store", store], environment: environment)
            #expect(fsck.status == 0, "\(fsck.stdout)")
        }
    }
}

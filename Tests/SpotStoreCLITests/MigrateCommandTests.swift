import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

extension BinaryTests {
    /// `spotstore migrate` moves a local store to the real PostgreSQL and S3 servers of
    /// `bin/test-services`: everything reads back the same through a server on the new
    /// backends, a second run continues without duplicating, another store is refused.
    @Suite(.enabled(if: TestServers.s3Enabled && PostgresTestServer.isEnabled))
    struct MigrateCommandTests {
        /// Object name → "MD5 size".
        typealias Listing = [String: String]

        @Test func aStoreMovesToPostgreSQLAndS3WithNothingLost() async throws {
            let root = try RulesCommandTests.temporaryDirectory()
            let store = root + "/storage"
            let alice = try RulesCommandTests.addUser("alice", store: store, claims: ["role=editor"])
            _ = try RulesCommandTests.addUser("bob", store: store)
            let ingest = try BinaryTests.run(["ingest", fixturesDirectory + "/geotagged", "--store", store, "--as", "alice"])
            #expect(ingest.status == 0, "\(ingest.stderr)")
            let request = DiskFullTests.request
            let media = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

            // The source, through its own server: a media file, a download token, a signed URL, a share link.
            let (source, sourceURL) = try await BinaryTests.startServer(store: store)
            #expect(try await request("PUT", "\(sourceURL)/v0/b/users/o/alice%2Fnotes.bin", alice, media).0 == 200)
            let before = try await listing(sourceURL, alice)
            let photoName = try #require(before.keys.sorted().first { $0.hasSuffix(".jpg") })
            let photoPath = photoName.replacingOccurrences(of: "/", with: "%2F")
            let (_, original) = try await request("GET", "\(sourceURL)/v0/b/spots/o/\(photoPath)?alt=media", alice, nil)
            let (_, thumbnail) = try await request("GET", "\(sourceURL)/v0/b/spots/o/\(photoPath)?alt=thumbnail&size=256", alice, nil)
            let tokenRun = try BinaryTests.run(["download-tokens", "add", "spots/\(photoName)", "--server", sourceURL, "--token", alice])
            #expect(tokenRun.status == 0, "\(tokenRun.stderr)")
            let tokenURL = try #require(tokenRun.stdout.split(separator: "\n").first { $0.hasPrefix("http") }.map(String.init))
            let (_, signed) = try await request("GET", "\(sourceURL)/v0/b/spots/o/\(photoPath)?alt=signedUrl", alice, nil)
            let signedURL = try #require(try JSONSerialization.jsonObject(with: Data(signed)) as? [String: Any])["url"] as? String
            let spot = try #require(photoName.split(separator: "/").first.map(String.init))
            let shareRun = try BinaryTests.run(["share", "spots/\(spot)", "--server", sourceURL, "--token", alice])
            #expect(shareRun.status == 0, "\(shareRun.stderr)")
            let shareURL = try #require(shareRun.stdout.split(separator: "\n").last.map(String.init))
            source.terminate()
            source.waitUntilExit()

            let (database, catalogURL, blobsURL, endpoint) = try await Self.newDestination()
            let migrate = ["migrate", "--from", store, "--to-catalog", catalogURL, "--to-blobs", blobsURL, "--s3-endpoint", endpoint]
            let first = try BinaryTests.run(migrate)
            #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
            #expect(!first.stdout.contains("DIFFERENT") && first.stdout.contains("download_tokens") && first.stdout.contains("spot_shares"), "\(first.stdout)")
            #expect(first.stderr.contains("blobs: ") && first.stderr.contains("copied"), "\(first.stderr)")

            // Again, the S3 server named by the environment as for every store command: it
            // continues, copies nothing twice, and the counts still match.
            let second = try BinaryTests.run(Array(migrate.dropLast(2)), environment: ["SPOTSTORE_S3_ENDPOINT": endpoint])
            #expect(second.status == 0 && second.stdout.contains("(resumed)"), "\(second.stdout)\(second.stderr)")
            #expect(second.stderr.contains(", 0 copied"), "\(second.stderr)")

            // Another store into the same destination is refused, and so is a non-empty bucket.
            let other = root + "/other"
            _ = try RulesCommandTests.addUser("carol", store: other)
            let refused = try BinaryTests.run(["migrate", "--from", other, "--to-catalog", catalogURL, "--to-blobs", blobsURL, "--s3-endpoint", endpoint])
            #expect(refused.status != 0 && refused.stderr.contains("another store"), "\(refused.stderr)")
            let otherDatabase = try await PostgresTestServer.createDatabase()
            let intoUsedBucket = try BinaryTests.run([
                "migrate", "--from", other, "--to-catalog", try PostgresTestServer.url(ofDatabase: otherDatabase), "--to-blobs", blobsURL, "--s3-endpoint", endpoint,
            ])
            #expect(intoUsedBucket.status != 0 && intoUsedBucket.stderr.contains("already holds blobs"), "\(intoUsedBucket.stderr)")

            // A server on the new backends, with a store directory of its own, serves the same.
            let environment = ["SPOTSTORE_CATALOG": catalogURL, "SPOTSTORE_BLOBS": blobsURL, "SPOTSTORE_S3_ENDPOINT": endpoint]
            let (moved, movedURL) = try await BinaryTests.startServer(store: root + "/node", environment: environment)
            defer { moved.terminate() }
            #expect(try await listing(movedURL, alice) == before)
            #expect(try await request("GET", "\(movedURL)/v0/b/spots/o/\(photoPath)?alt=media", alice, nil).1 == original)
            #expect(try await request("GET", "\(movedURL)/v0/b/spots/o/\(photoPath)?alt=thumbnail&size=256", alice, nil).1 == thumbnail)
            #expect(try await request("GET", "\(movedURL)/v0/b/users/o/alice%2Fnotes.bin?alt=media", alice, nil).1 == media)
            for url in [tokenURL, try #require(signedURL), shareURL] {
                let (bytes, response) = try await URLSession.shared.data(from: try #require(URL(string: url.replacingOccurrences(of: sourceURL, with: movedURL))))
                #expect((response as? HTTPURLResponse)?.statusCode == 200 && (url == shareURL || [UInt8](bytes) == original), "\(url)")
            }
            let fsck = try BinaryTests.run(["fsck", "--store", root + "/node"], environment: environment)
            #expect(fsck.status == 0, "\(fsck.stdout)\(fsck.stderr)")

            try await PostgresTestServer.dropDatabase(database)
            try await PostgresTestServer.dropDatabase(otherDatabase)
        }

        /// A migration killed while it copies blobs continues when run again: the blobs copied
        /// before are not copied twice, and everything arrives.
        @Test func aMigrationKilledWhileCopyingContinues() async throws {
            let root = try RulesCommandTests.temporaryDirectory()
            let store = root + "/storage"
            let alice = try RulesCommandTests.addUser("alice", store: store)
            let (source, sourceURL) = try await BinaryTests.startServer(store: store)
            for index in 0..<60 {
                let bytes = (0..<262_144).map { UInt8(truncatingIfNeeded: $0 &* (index + 3) &+ index) }
                #expect(try await DiskFullTests.request("PUT", "\(sourceURL)/v0/b/users/o/alice%2Fpart-\(index).bin", token: alice, body: bytes).0 == 200)
            }
            let before = try await listing(sourceURL, alice)
            source.terminate()
            source.waitUntilExit()

            let (database, catalogURL, blobsURL, endpoint) = try await Self.newDestination()
            let migrate = ["migrate", "--from", store, "--to-catalog", catalogURL, "--to-blobs", blobsURL, "--s3-endpoint", endpoint]

            // The first run is killed once it reports its first tenth of the blobs.
            let first = Process()
            first.executableURL = URL(fileURLWithPath: BinaryTests.binary)
            first.arguments = migrate
            let stderr = Pipe()
            first.standardError = stderr
            first.standardOutput = FileHandle.nullDevice
            try first.runSerially()
            var said = ""
            while !said.contains("blobs: ") {
                let more = stderr.fileHandleForReading.availableData
                guard !more.isEmpty else { break }
                said += String(decoding: more, as: UTF8.self)
            }
            kill(first.processIdentifier, SIGKILL)
            first.waitUntilExit()
            #expect(first.terminationReason == .uncaughtSignal, "killed mid-copy: \(said)")

            let second = try BinaryTests.run(migrate)
            #expect(second.status == 0 && second.stdout.contains("(resumed)") && !second.stdout.contains("DIFFERENT"), "\(second.stdout)\(second.stderr)")
            let lastReport = try #require(second.stderr.split(separator: "\n").last { $0.hasPrefix("blobs: ") })
            let thereWord = lastReport.split(separator: ",").last?.split(separator: " ").first
            let there = try #require(thereWord.flatMap { Int($0) }, "\(lastReport)")
            #expect(there > 0 && there < 60, "the second run found the blobs the first had copied: \(lastReport)")

            let environment = ["SPOTSTORE_CATALOG": catalogURL, "SPOTSTORE_BLOBS": blobsURL, "SPOTSTORE_S3_ENDPOINT": endpoint]
            let (moved, movedURL) = try await BinaryTests.startServer(store: root + "/node", environment: environment)
            defer { moved.terminate() }
            #expect(try await listing(movedURL, alice) == before)
            let (_, last) = try await DiskFullTests.request("GET", "\(movedURL)/v0/b/users/o/alice%2Fpart-59.bin?alt=media", token: alice)
            #expect(last == (0..<262_144).map { UInt8(truncatingIfNeeded: $0 &* 62 &+ 59) })
            let fsck = try BinaryTests.run(["fsck", "--store", root + "/node"], environment: environment)
            #expect(fsck.status == 0, "\(fsck.stdout)\(fsck.stderr)")
            try await PostgresTestServer.dropDatabase(database)
        }

        /// Without `--to-blobs` the larger blobs stay files under the store, and the small
        /// ones, which the catalog keeps, move with it to PostgreSQL.
        @Test func theCatalogAloneMovesWithTheSmallBlobs() async throws {
            let root = try RulesCommandTests.temporaryDirectory()
            let store = root + "/storage"
            let alice = try RulesCommandTests.addUser("alice", store: store)
            let request = DiskFullTests.request
            let tiny = Array("a note of a few bytes".utf8), large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let (source, sourceURL) = try await BinaryTests.startServer(store: store)
            #expect(try await request("PUT", "\(sourceURL)/v0/b/users/o/alice%2Ftiny.txt", alice, tiny).0 == 200)
            #expect(try await request("PUT", "\(sourceURL)/v0/b/users/o/alice%2Flarge.bin", alice, large).0 == 200)
            source.terminate()
            source.waitUntilExit()

            let (database, catalogURL, _, _) = try await Self.newDestination()
            let migrated = try BinaryTests.run(["migrate", "--from", store, "--to-catalog", catalogURL])
            #expect(migrated.status == 0 && !migrated.stdout.contains("DIFFERENT"), "\(migrated.stdout)\(migrated.stderr)")
            #expect(migrated.stderr.contains("1 copied, 1 there already"), "the tiny blob copied, the large one a file already: \(migrated.stderr)")

            let (moved, movedURL) = try await BinaryTests.startServer(store: store, environment: ["SPOTSTORE_CATALOG": catalogURL])
            defer { moved.terminate() }
            #expect(try await request("GET", "\(movedURL)/v0/b/users/o/alice%2Ftiny.txt?alt=media", alice, nil) == (200, tiny))
            #expect(try await request("GET", "\(movedURL)/v0/b/users/o/alice%2Flarge.bin?alt=media", alice, nil) == (200, large))
            try await PostgresTestServer.dropDatabase(database)
        }

        /// A new database on the test PostgreSQL and a new prefix of the test bucket.
        static func newDestination() async throws -> (database: String, catalogURL: String, blobsURL: String, endpoint: String) {
            let database = try await PostgresTestServer.createDatabase()
            let (endpoint, bucket) = try TestServers.s3()
            return (database, try PostgresTestServer.url(ofDatabase: database), "s3://\(bucket)/cli-tests/\(UUID().uuidString)", endpoint)
        }

        /// Every object of the spots bucket and of alice's folder, by name, with its MD5 and size as listed.
        private func listing(_ server: String, _ token: String) async throws -> Listing {
            var objects: Listing = [:]
            for (bucket, query) in [("spots", ""), ("users", "?prefix=alice%2F")] {
                let (status, body) = try await DiskFullTests.request("GET", "\(server)/v0/b/\(bucket)/o\(query)", token: token)
                #expect(status == 200)
                let items = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])["items"] as? [[String: Any]] ?? []
                for item in items {
                    let name = try #require(item["name"] as? String)
                    objects[bucket == "spots" ? name : "users:" + name] = "\(item["md5Hash"] as? String ?? "") \(item["size"] as? String ?? "")"
                }
            }
            return objects
        }
    }
}

import Foundation
import Testing
import TestSupport

extension BinaryTests {
    /// The backends a test of several processes runs on: the embedded default, and the real
    /// PostgreSQL and S3 servers of `bin/test-services` (when configured, or required by
    /// `SPOTSTORE_TEST_REQUIRE_SERVICES=1`, which then fails saying what is missing).
    enum StoreBackend: String, Sendable, CustomTestStringConvertible {
        case embedded = "SQLite and files"
        case s3 = "SQLite and S3"
        case postgresAndS3 = "PostgreSQL and S3"

        static var all: [StoreBackend] {
            [.embedded] + (TestServers.s3Enabled ? [.s3] : []) + (TestServers.s3Enabled && PostgresTestServer.isEnabled ? [.postgresAndS3] : [])
        }

        var testDescription: String { rawValue }

        /// Runs `body` with the environment that points every `spotstore` process at a new,
        /// empty store on this backend: a new prefix of the test bucket, a new database
        /// (dropped afterwards).
        func withEnvironment(_ body: ([String: String]) async throws -> Void) async throws {
            switch self {
            case .embedded:
                try await body([:])
            case .s3:
                try await body(try Self.newBlobsPrefix())
            case .postgresAndS3:
                let database = try await PostgresTestServer.createDatabase()
                var environment = try Self.newBlobsPrefix()
                environment["SPOTSTORE_CATALOG"] = try PostgresTestServer.url(ofDatabase: database)
                do {
                    try await body(environment)
                } catch {
                    try? await PostgresTestServer.dropDatabase(database)
                    throw error
                }
                try await PostgresTestServer.dropDatabase(database)
            }
        }

        /// A new prefix of the test bucket.
        private static func newBlobsPrefix() throws -> [String: String] {
            let (endpoint, bucket) = try TestServers.s3()
            return ["SPOTSTORE_BLOBS": "s3://\(bucket)/cli-tests/\(UUID().uuidString)", "SPOTSTORE_S3_ENDPOINT": endpoint]
        }
    }
}

import Foundation
import Testing
import TestSupport

extension BinaryTests {
    /// The backends a test of several processes runs on: the embedded default, and blobs in
    /// the real S3 server of `bin/test-services` (when configured, or required by
    /// `SPOTSTORE_TEST_REQUIRE_SERVICES=1`, which then fails saying what is missing).
    enum StoreBackend: String, Sendable, CustomTestStringConvertible {
        case embedded = "SQLite and files"
        case s3 = "SQLite and S3"

        static var all: [StoreBackend] { [.embedded] + (TestServers.s3Enabled ? [.s3] : []) }

        var testDescription: String { rawValue }

        /// The environment that points every `spotstore` process at this backend: for S3, a
        /// new prefix of the test bucket, so the store starts empty.
        func environment() throws -> [String: String] {
            switch self {
            case .embedded:
                return [:]
            case .s3:
                let (endpoint, bucket) = try TestServers.s3()
                return ["SPOTSTORE_BLOBS": "s3://\(bucket)/cli-tests/\(UUID().uuidString)", "SPOTSTORE_S3_ENDPOINT": endpoint]
            }
        }
    }
}

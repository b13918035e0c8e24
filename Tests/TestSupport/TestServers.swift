import Foundation
import SpotCore

/// The real servers of the integration tests, as `bin/test-services start` describes them in
/// `.build/test-services.env`.
public enum TestServers {
    public static let environment = ProcessInfo.processInfo.environment

    /// `SPOTSTORE_TEST_REQUIRE_SERVICES=1` (bin/test): tests that need a server fail when it
    /// is missing instead of being left out.
    public static let required = environment["SPOTSTORE_TEST_REQUIRE_SERVICES"] == "1"

    /// Whether the tests against the S3 server run: when one is configured, and always when
    /// services are required (they then fail saying what is missing).
    public static let s3Enabled = required || (environment["SPOTSTORE_TEST_S3_ENDPOINT"] != nil && environment["SPOTSTORE_TEST_S3_BUCKET"] != nil)

    /// The S3 server's endpoint and the test bucket.
    /// - Throws: when none is configured, saying how to start one.
    public static func s3() throws -> (endpoint: String, bucket: String) {
        guard let endpoint = environment["SPOTSTORE_TEST_S3_ENDPOINT"], let bucket = environment["SPOTSTORE_TEST_S3_BUCKET"] else {
            throw SpotError(.internal, "no S3 server configured: run `bin/test-services start` and `. .build/test-services.env`")
        }
        return (endpoint, bucket)
    }
}

import ArgumentParser
import Foundation

/// Where the catalog and the blobs live when not in the embedded default under `--store`:
/// a PostgreSQL database, an S3-compatible object store, or both.
struct BackendOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The catalog in PostgreSQL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (env SPOTSTORE_CATALOG; default STORE/catalog.sqlite).",
        valueName: "url"))
    var catalog: String?

    @Option(help: ArgumentHelp(
        "The blobs in an S3-compatible bucket: s3://BUCKET[/PREFIX] (env SPOTSTORE_BLOBS; default STORE/blobs). Credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, region from AWS_REGION (us-east-1).",
        valueName: "url"))
    var blobs: String?

    @Option(name: .customLong("s3-endpoint"), help: ArgumentHelp(
        "The S3 server, path-style addressing: http(s)://HOST[:PORT] (env SPOTSTORE_S3_ENDPOINT; default AWS itself).",
        valueName: "url"))
    var s3Endpoint: String?

    /// These choices, each taken from the environment when not given.
    var backends: Backends {
        let environment = ProcessInfo.processInfo.environment
        func chosen(_ option: String?, _ variable: String) -> String? { Self.chosen(option, variable, in: environment) }
        return Backends(
            catalogURL: chosen(catalog, "SPOTSTORE_CATALOG"), blobsURL: chosen(blobs, "SPOTSTORE_BLOBS"), s3Endpoint: chosen(s3Endpoint, "SPOTSTORE_S3_ENDPOINT"), environment: environment)
    }

    /// `option` when given, else the environment's `variable`; an empty value is none.
    static func chosen(_ option: String?, _ variable: String, in environment: [String: String]) -> String? {
        (option ?? environment[variable]).flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// The backends a store uses: a `nil` URL is the embedded default under the store's directory.
struct Backends: Sendable {
    var catalogURL: String?
    var blobsURL: String?
    var s3Endpoint: String?
    /// Where the S3 credentials and region come from.
    var environment: [String: String]

    /// SQLite and files under the store's directory, as without options.
    static let embedded = Backends(environment: [:])
}

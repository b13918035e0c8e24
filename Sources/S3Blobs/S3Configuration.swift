import Foundation
import SpotCore

/// Where blobs live in an object store: `s3://BUCKET[/PREFIX]`.
public struct S3Location: Sendable, Equatable {
    /// The bucket's name (letters, digits, `.`, `-`, `_`).
    public let bucket: String
    /// Put before every key: empty, or ending with `/`.
    public let prefix: String

    /// Parses `s3://BUCKET` or `s3://BUCKET/PREFIX` (slashes around the prefix are optional).
    public init(url: String) throws {
        let usage = "--blobs must look like s3://BUCKET or s3://BUCKET/PREFIX, not '\(url)'"
        guard url.hasPrefix("s3://") else { throw SpotError(.badRequest, usage) }
        let rest = url.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
        guard !bucket.isEmpty, bucket.allSatisfy(allowed.contains) else { throw SpotError(.badRequest, usage) }
        let prefix = rest.dropFirst(bucket.count).split(separator: "/").joined(separator: "/")
        self.bucket = bucket
        self.prefix = prefix.isEmpty ? "" : prefix + "/"
    }
}

/// The object store's base URL, used with path-style addressing (`ENDPOINT/BUCKET/KEY`).
public struct S3Endpoint: Sendable, Equatable {
    /// `scheme://host[:port]`, without a trailing slash.
    public let url: String
    /// `host[:port]` as written, which is also the `Host` header that gets signed.
    public let authority: String

    /// Accepts an `http://` or `https://` URL with a host and no path, query or user.
    public init(_ text: String) throws {
        let trimmed = text.hasSuffix("/") ? String(text.dropLast()) : text
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty, url.path.isEmpty, url.query == nil, url.user == nil
        else {
            throw SpotError(.badRequest, "--s3-endpoint must be an http:// or https:// URL like http://127.0.0.1:9000, not '\(text)'")
        }
        self.url = trimmed
        self.authority = String(trimmed.dropFirst(scheme.count + 3))
    }

    /// AWS's own endpoint for `region`.
    public static func aws(region: String) -> S3Endpoint {
        try! S3Endpoint("https://s3.\(region).amazonaws.com")
    }
}

/// How often, and after how long, a failed request is tried again: 5xx answers (503
/// SlowDown among them), S3's RequestTimeout, refused or broken connections and timeouts.
/// Other answers (4xx) are final.
public struct RetryPolicy: Sendable {
    /// Tries in all, the first included.
    public var attempts: Int
    /// The wait before the second try; it doubles for each further one, up to `maxDelay`.
    public var firstDelay: Duration
    /// The longest wait between two tries.
    public var maxDelay: Duration

    /// By default 5 tries, with at most 3 s of waiting between them in all.
    public init(attempts: Int = 5, firstDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(5)) {
        self.attempts = attempts
        self.firstDelay = firstDelay
        self.maxDelay = maxDelay
    }

    /// The wait after failed try number `attempt` (1-based): half the doubled delay, plus
    /// up to as much again at random, so that clients that failed together do not retry together.
    func delay(after attempt: Int) -> Duration {
        let full = min(maxDelay, firstDelay * (1 << min(attempt - 1, 20)))
        return full / 2 + full / 2 * Double.random(in: 0...1)
    }
}

/// Everything `S3BlobStore` needs: where, who, and how large uploads and retries go.
public struct S3Configuration: Sendable {
    /// The bucket, and the prefix of every key.
    public var location: S3Location
    /// The server, addressed path-style.
    public var endpoint: S3Endpoint
    public var credentials: AWSSignatureV4.Credentials
    /// The region requests are signed for.
    public var region: String
    /// Files larger than this are uploaded in parts (multipart upload).
    public var multipartThreshold: Int64 = 64 << 20
    /// The size of every part but the last; S3 wants at least 5 MiB. Grown when a file
    /// would need more than 1000 parts (Swift's limit; AWS allows 10,000).
    public var partSize: Int64 = 16 << 20
    /// How failed requests are tried again.
    public var retry = RetryPolicy()
    /// How long to wait for a connection to open.
    public var connectTimeout: Duration = .seconds(10)
    /// How long a request may go without receiving a byte before it fails (and is retried).
    public var idleTimeout: Duration = .seconds(60)

    /// A configuration with the default sizes, retries and timeouts.
    public init(location: S3Location, endpoint: S3Endpoint, credentials: AWSSignatureV4.Credentials, region: String) {
        self.location = location
        self.endpoint = endpoint
        self.credentials = credentials
        self.region = region
    }

    /// From `--blobs s3://BUCKET[/PREFIX]`, `--s3-endpoint URL` (AWS itself when `nil`) and
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION` (default us-east-1) in `environment`.
    public init(blobs: String, endpoint: String?, environment: [String: String]) throws {
        guard let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty,
            let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        else {
            throw SpotError(.badRequest, "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to the object store's credentials to use --blobs \(blobs)")
        }
        let region = environment["AWS_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
        self.init(
            location: try S3Location(url: blobs),
            endpoint: try endpoint.map(S3Endpoint.init) ?? .aws(region: region),
            credentials: .init(accessKeyID: key, secretAccessKey: secret),
            region: region
        )
    }
}

import AsyncHTTPClient
import Foundation
import Metrics
import NIOCore
import NIOHTTP1
import NIOPosix
import SpotCore

/// One request to the bucket, before it is signed.
struct S3Request: Sendable {
    var method: HTTPMethod
    /// The object's key; `nil` for the bucket itself.
    var key: String?
    var query: [(name: String, value: String)] = []
    var headers: [(name: String, value: String)] = []
    /// The body's SHA-256 in hex, sent as `x-amz-content-sha256`: the server refuses a body
    /// that does not match it.
    var payloadHash = emptyPayloadHash
    /// Makes the body afresh for each try (a stream cannot be replayed); `nil` for none.
    var body: @Sendable () -> HTTPClientRequest.Body? = { nil }
    /// For a ranged GET: the bytes wanted from the object (`skip` matters only when a server
    /// ignores the range and answers 200 with the whole object).
    var window: (skip: Int, count: Int)?
    /// Whether a success's body is handed back unread (`S3Response.unread`), for streaming.
    var streamsSuccess = false

    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The S3 operation, for metrics: `GetObject`, `PutObject`, `UploadPart`, `ListObjectsV2`, …
    var operation: String {
        let has = { (name: String) in query.contains { $0.name == name } }
        switch (method, key) {
        case (.GET, nil): return has("list-type") ? "ListObjectsV2" : "GetBucket"
        case (.HEAD, nil): return "HeadBucket"
        case (.GET, _): return "GetObject"
        case (.HEAD, _): return "HeadObject"
        case (.PUT, _): return has("partNumber") ? "UploadPart" : "PutObject"
        case (.POST, _): return has("uploadId") ? "CompleteMultipartUpload" : "CreateMultipartUpload"
        case (.DELETE, _): return has("uploadId") ? "AbortMultipartUpload" : "DeleteObject"
        default: return method.rawValue
        }
    }
}

/// An answer with its body read (bounded: see `S3Client.send`), or a success's body left
/// unread when the request streams it.
struct S3Response: Sendable {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: [UInt8]
    var unread: ResponseWindow?
    /// How many tries this answer took (for messages).
    var attempts = 1

    /// The S3 error in the body, if it is one; never looked for in a success, whose body
    /// may be megabytes of photo.
    var error: S3ErrorBody? { (200..<300).contains(status.code) ? nil : S3ErrorBody(body) }
}

/// Signs and sends requests to one bucket over one `HTTPClient`, trying again with backoff
/// as the `RetryPolicy` says, and turns final failures into one-line `SpotError`s.
struct S3Client: Sendable {
    let configuration: S3Configuration
    let http: HTTPClient
    let signer: AWSSignatureV4

    init(configuration: S3Configuration) {
        self.configuration = configuration
        self.signer = AWSSignatureV4(credentials: configuration.credentials, region: configuration.region)
        var settings = HTTPClient.Configuration()
        settings.timeout = .init(connect: TimeAmount(configuration.connectTimeout), read: TimeAmount(configuration.idleTimeout))
        // Retries are ours, with backoff and a bound; a refused connection should count as one try.
        settings.connectionPool.retryConnectionEstablishment = false
        // AsyncHTTPClient's default of 8 connections would queue the 9th concurrent download.
        settings.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        settings.redirectConfiguration = .disallow
        self.http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
    }

    /// Sends `request`, again after a backoff while the answer is a 5xx, `SlowDown` or
    /// `RequestTimeout`, or the connection fails, up to the policy's attempts. The last
    /// answer is returned whatever its status; when the last try got no answer at all this
    /// throws `.unavailable`. Bodies are read up to 8 MiB, or the request's window. `retry`
    /// replaces the configuration's policy.
    func send(_ request: S3Request, retry: RetryPolicy? = nil) async throws -> S3Response {
        let policy = retry ?? configuration.retry
        var attempt = 1
        while true {
            let started = ContinuousClock.now
            do {
                var response = try await sendOnce(request)
                response.attempts = attempt
                Self.record(request, status: String(response.status.code), since: started)
                guard attempt < policy.attempts, Self.isTransient(response) else { return response }
            } catch let error where error is SpotError || error is CancellationError {
                Self.record(request, status: "error", since: started)
                throw error
            } catch {
                Self.record(request, status: "error", since: started)
                guard attempt < policy.attempts else {
                    throw SpotError(.unavailable, "cannot reach the S3 endpoint \(configuration.endpoint.url) (\(Self.reason(error))) after \(attempt) attempt\(attempt == 1 ? "" : "s"): is it running? check --s3-endpoint")
                }
            }
            try await Task.sleep(for: policy.delay(after: attempt))
            attempt += 1
        }
    }

    /// Counts one try of `request` (swift-metrics), by operation and status (`error`: no
    /// answer), with its latency.
    static func record(_ request: S3Request, status: String, since started: ContinuousClock.Instant) {
        let operation = request.operation
        Counter(label: "spotstore_s3_requests_total", dimensions: [("operation", operation), ("status", status)]).increment()
        Timer(label: "spotstore_s3_request_duration_seconds", dimensions: [("operation", operation)]).record(duration: ContinuousClock.now - started)
    }

    /// Whether another try may get a better answer.
    static func isTransient(_ response: S3Response) -> Bool {
        response.status.code >= 500 || ["SlowDown", "RequestTimeout"].contains(response.error?.code)
    }

    private func sendOnce(_ request: S3Request) async throws -> S3Response {
        let location = configuration.location
        let path = "/\(location.bucket)" + (request.key.map { "/\($0)" } ?? "")
        let headers = [("host", configuration.endpoint.authority), ("x-amz-content-sha256", request.payloadHash)] + request.headers
        let query = AWSSignatureV4.canonicalQuery(request.query)
        var http = HTTPClientRequest(url: configuration.endpoint.url + AWSSignatureV4.encodePath(path) + (query.isEmpty ? "" : "?\(query)"))
        http.method = request.method
        for (name, value) in signer.sign(method: request.method.rawValue, path: path, query: request.query, headers: headers, payloadHash: request.payloadHash, at: Date()) {
            http.headers.add(name: name, value: value)
        }
        if let body = request.body() { http.body = body }
        // The idle timeout bounds a stalled transfer; this only bounds a pathological trickle.
        let response = try await self.http.execute(http, timeout: .hours(2))
        var body = ResponseWindow(response, for: request, endpoint: configuration.endpoint.url)
        if request.streamsSuccess, [.ok, .partialContent].contains(response.status) {
            return S3Response(status: response.status, headers: response.headers, body: [], unread: body)
        }
        var bytes: [UInt8] = []
        if let window = request.window { bytes.reserveCapacity(window.count) }
        while let chunk = try await body.next() {
            bytes.append(contentsOf: chunk.readableBytesView)
        }
        return S3Response(status: response.status, headers: response.headers, body: bytes)
    }

    /// A short reason for a transport failure: "connection refused", "connect timed out", …
    static func reason(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError, let first = error.connectionErrors.first {
            return reason(first.error)
        }
        if let error = error as? IOError {
            return String(cString: strerror(error.errnoCode)).lowercased()
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "connect timed out"
            case .readTimeout: return "no data within the idle timeout"
            case .remoteConnectionClosed: return "the connection closed"
            default: break
            }
        }
        return "\(error)"
    }

    /// The one-line error for a final answer that is not the one wanted, `doing` saying what
    /// was tried ("cannot store blob X"). Credentials, a missing bucket and an endpoint that
    /// is not S3 get their own advice.
    func failure(_ response: S3Response, _ doing: String) -> SpotError {
        let endpoint = configuration.endpoint.url
        let bucket = configuration.location.bucket
        guard let error = response.error else {
            return SpotError(.unavailable, "\(doing): \(endpoint) answered HTTP \(response.status.code) without an S3 error: is it an S3 server? check --s3-endpoint")
        }
        switch error.code {
        case "InvalidAccessKeyId", "SignatureDoesNotMatch":
            return SpotError(.internal, "\(doing): bad credentials (\(error.code)) for the S3 endpoint \(endpoint): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        case "AccessDenied":
            return SpotError(.internal, "\(doing): access denied to bucket \(bucket) at \(endpoint): give AWS_ACCESS_KEY_ID's user access to it, or check the key")
        case "BadDigest", "XAmzContentSHA256Mismatch":
            return SpotError(.internal, "\(doing): the object store refused the bytes: they do not have the SHA-256 sent with them (\(error.code))")
        case "NoSuchBucket":
            return SpotError(.internal, "\(doing): bucket \(bucket) does not exist at \(endpoint): create it first (e.g. aws s3 mb s3://\(bucket) --endpoint-url \(endpoint))")
        default:
            let kind: SpotError.Kind = Self.isTransient(response) ? .unavailable : .internal
            let tries = Self.isTransient(response) ? " after \(response.attempts) attempt\(response.attempts == 1 ? "" : "s")" : ""
            return SpotError(kind, "\(doing): the S3 endpoint \(endpoint) answered \(response.status.code) \(error.code)\(tries): \(error.message)")
        }
    }
}

/// The wanted part of an answer's body, as it arrives: for a ranged GET the window's bytes
/// (skipping what a server that ignores `Range` sends first, and leaving the rest unread,
/// which closes the connection); otherwise the whole body, which must fit in 8 MiB.
struct ResponseWindow: AsyncIteratorProtocol, Sendable {
    // Not Sendable because two tasks must not read it at once; one reader at a time, as an
    // iterator is used, may hand it on.
    nonisolated(unsafe) var chunks: HTTPClientResponse.Body.AsyncIterator
    var skip: Int
    var remaining: Int
    /// Whether bytes past `remaining` are an error (no window) rather than unwanted.
    let bounded: Bool
    let what: String

    init(_ response: HTTPClientResponse, for request: S3Request, endpoint: String) {
        chunks = response.body.makeAsyncIterator()
        switch (response.status, request.window) {
        case (.partialContent, let window?): (skip, remaining) = (0, window.count)
        case (.ok, let window?): (skip, remaining) = (window.skip, window.count)
        default: (skip, remaining) = (0, 8 << 20)
        }
        bounded = request.window == nil
        what = "the S3 endpoint \(endpoint) answered \(request.method) \(request.key ?? "the bucket")"
    }

    mutating func next() async throws -> ByteBuffer? {
        while remaining > 0, var chunk = try await chunks.next() {
            let dropped = min(skip, chunk.readableBytes)
            chunk.moveReaderIndex(forwardBy: dropped)
            skip -= dropped
            guard chunk.readableBytes > 0 else { continue }
            if bounded, chunk.readableBytes > remaining { throw tooLong }
            let taken = min(chunk.readableBytes, remaining)
            remaining -= taken
            return chunk.readSlice(length: taken)
        }
        if bounded, remaining == 0, let more = try await chunks.next(), more.readableBytes > 0 { throw tooLong }
        return nil
    }

    private var tooLong: SpotError { SpotError(.internal, "\(what) with more than 8 MiB") }
}

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFileSystem
import SpotCore

/// Blobs as objects `PREFIX/sha256/<hex>` in an S3 bucket (path-style, any S3-compatible
/// server), so ListObjectsV2's key order is digest order.
///
/// Every upload carries the blob's SHA-256 as `x-amz-content-sha256`: the object store
/// checks the bytes it receives against it and refuses the upload when they differ (in
/// parts, each part carries its own SHA-256, and the parts together are checked against the
/// digest before the upload is completed). Files are streamed from disk, in parts above
/// `multipartThreshold`; reads ask for a byte range. Transient failures are retried as the
/// configuration's `RetryPolicy` says. Storing a digest again uploads it again, which heals
/// a damaged copy. Open it with `open` (which checks access), and `shutdown()` it when done
/// (a debug build stops when a store's HTTP client is dropped still running).
public struct S3BlobStore: BlobStore {
    let client: S3Client

    var configuration: S3Configuration { client.configuration }

    /// The store for `configuration`, after one listing showed that the endpoint answers,
    /// the credentials are accepted and the bucket exists; otherwise a one-line error
    /// saying which and what to do.
    public static func open(_ configuration: S3Configuration) async throws -> S3BlobStore {
        let store = S3BlobStore(client: S3Client(configuration: configuration))
        do {
            try await store.checkAccess(retry: nil)
        } catch {
            try? await store.shutdown()
            throw error
        }
        return store
    }

    /// One listing of a single key, tried once.
    public func checkHealth() async throws {
        try await checkAccess(retry: RetryPolicy(attempts: 1))
    }

    /// Lists one key, retried as `retry` says (the configuration's policy when `nil`), and
    /// throws unless the answer is a listing.
    private func checkAccess(retry: RetryPolicy?) async throws {
        let doing = "cannot use s3://\(configuration.location.bucket)/\(configuration.location.prefix)"
        let response = try await client.send(listRequest(after: nil, limit: 1), retry: retry)
        guard response.status == .ok else { throw client.failure(response, doing) }
        guard ListBucketPage(response.body) != nil else {
            throw SpotError(.internal, "\(doing): \(configuration.endpoint.url) did not answer a listing like an S3 server: check --s3-endpoint")
        }
    }

    /// Closes the connections; the store cannot be used afterwards.
    public func shutdown() async throws {
        try await client.http.shutdown()
    }

    /// Where the blob `digest` lives in the bucket.
    public func key(of digest: Digest) -> String {
        keyPrefix + digest.hex
    }

    private var keyPrefix: String { configuration.location.prefix + "sha256/" }

    public func store(fileAt path: String, as digest: Digest) async throws {
        guard let size = try await FileSystem.shared.info(forFileAt: FilePath(path))?.size else {
            throw SpotError(.internal, "cannot store blob \(digest): \(path) is gone")
        }
        try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { file in
            if size > configuration.multipartThreshold {
                try await storeInParts(file, size: size, as: digest)
            } else {
                try await put(digest, hash: digest.hex) {
                    .stream(file.readChunks(in: 0..<size, chunkLength: .mebibytes(1)), length: .known(size))
                }
            }
        }
        try await FileSystem.shared.removeItem(at: FilePath(path))
    }

    public func store(_ bytes: [UInt8], as digest: Digest) async throws {
        try await put(digest, hash: digest.hex) { .bytes(bytes) }
    }

    /// One PutObject of `body`, whose SHA-256 is `hash`.
    private func put(_ digest: Digest, hash: String, body: @escaping @Sendable () -> HTTPClientRequest.Body) async throws {
        let response = try await client.send(S3Request(method: .PUT, key: key(of: digest), payloadHash: hash, body: body))
        guard response.status == .ok else { throw client.failure(response, "cannot store blob \(digest)") }
    }

    /// From a HEAD request. A missing bucket looks like a missing blob here (a HEAD answer
    /// has no body to tell them apart).
    public func size(of digest: Digest) async throws -> Int64? {
        let response = try await client.send(S3Request(method: .HEAD, key: key(of: digest)))
        switch response.status {
        case .ok:
            guard let length = response.headers.first(name: "content-length").flatMap({ Int64($0) }) else {
                throw SpotError(.internal, "cannot stat blob \(digest): the S3 endpoint answered HEAD without a Content-Length")
            }
            return length
        case .notFound: return nil
        default: throw client.failure(response, "cannot stat blob \(digest)")
        }
    }

    /// One ranged GET of up to 8 MiB (a thumbnail), not a HEAD and a GET; a larger blob
    /// then costs a HEAD and a GET of the rest.
    public func read(_ digest: Digest) async throws -> [UInt8]? {
        let first = 8 << 20
        guard let head = try await read(digest, offset: 0, count: first) else { return nil }
        guard head.count == first, let size = try await size(of: digest), size > first else { return head }
        guard let rest = try await read(digest, offset: Int64(first), count: Int(size) - first) else { return nil }
        return head + rest
    }

    /// A GET with `Range: bytes=FIRST-LAST`; 416 (the range starts past the end) is no bytes.
    public func read(_ digest: Digest, offset: Int64, count: Int) async throws -> [UInt8]? {
        guard count > 0 else { return try await size(of: digest).map { _ in [] } }
        let range = "bytes=\(offset)-\(offset + Int64(count) - 1)"
        let response = try await client.send(S3Request(method: .GET, key: key(of: digest), headers: [("range", range)], window: (Int(offset), count)))
        switch response.status {
        case .ok, .partialContent: return response.body
        case .rangeNotSatisfiable: return []
        case .notFound where response.error?.code != "NoSuchBucket": return nil
        default: throw client.failure(response, "cannot read blob \(digest)")
        }
    }

    /// One ranged GET whose body is handed on as it arrives (retried only until its head).
    public func stream(_ digest: Digest, range: Range<Int64>) async throws -> BlobByteStream? {
        guard !range.isEmpty else { return nil }
        let header = "bytes=\(range.lowerBound)-\(range.upperBound - 1)"
        var request = S3Request(method: .GET, key: key(of: digest), headers: [("range", header)], window: (Int(range.lowerBound), range.count))
        request.streamsSuccess = true
        let response = try await client.send(request)
        switch response.status {
        case .ok, .partialContent: return response.unread
        case .rangeNotSatisfiable: return nil
        case .notFound where response.error?.code != "NoSuchBucket": return nil
        default: throw client.failure(response, "cannot read blob \(digest)")
        }
    }

    public func remove(_ digest: Digest) async throws {
        let response = try await client.send(S3Request(method: .DELETE, key: key(of: digest)))
        switch response.status {
        case .noContent, .ok: return
        case .notFound where response.error?.code != "NoSuchBucket": return
        default: throw client.failure(response, "cannot remove blob \(digest)")
        }
    }

    /// ListObjectsV2 from `start-after`, page after page while the server returns fewer
    /// blobs than asked for and has more; keys that are not a digest's are skipped.
    public func blobs(after: Digest?, limit: Int) async throws -> [StoredBlob] {
        var page: [StoredBlob] = []
        var continuation: String?
        while page.count < limit {
            let response = try await client.send(listRequest(after: after, limit: limit - page.count, continuation: continuation))
            guard response.status == .ok, let listing = ListBucketPage(response.body) else {
                throw client.failure(response, "cannot list blobs")
            }
            for (key, size) in listing.objects {
                let name = String(key.dropFirst(keyPrefix.count))
                guard key.hasPrefix(keyPrefix), let digest = Digest(hex: name), digest.hex == name else { continue }
                page.append(StoredBlob(digest: digest, size: size))
            }
            guard let next = listing.continuationToken else { break }
            continuation = next
        }
        return Array(page.prefix(limit))
    }

    /// A ListObjectsV2 request for up to `limit` (at most 1000) keys of blobs after `after`,
    /// or where the `continuation` token of the previous page says.
    func listRequest(after: Digest?, limit: Int, continuation: String? = nil) -> S3Request {
        var query = [("list-type", "2"), ("prefix", keyPrefix), ("max-keys", String(min(max(limit, 1), 1000)))]
        if let continuation {
            query.append(("continuation-token", continuation))
        } else if let after {
            query.append(("start-after", key(of: after)))
        }
        return S3Request(method: .GET, key: nil, query: query)
    }
}

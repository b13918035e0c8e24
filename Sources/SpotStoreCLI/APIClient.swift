import ArgumentParser
import AsyncHTTPClient
import Foundation
import Ingest
import NIOCore
import SpotService
import NIOHTTP1
import SpotAPI
import SpotCore

/// How client commands reach the service.
struct ClientOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The service's URL (default: $SPOTSTORE_SERVER or http://127.0.0.1:8080).", valueName: "url"))
    var server: String?

    @Option(help: ArgumentHelp("Your API token (default: $SPOTSTORE_TOKEN).", valueName: "token"))
    var token: String?

    /// The client for these options, reading the environment for what was not given.
    func client() throws -> APIClient {
        let environment = ProcessInfo.processInfo.environment
        let server = server ?? environment["SPOTSTORE_SERVER"] ?? "http://127.0.0.1:8080"
        guard let token = token ?? environment["SPOTSTORE_TOKEN"], !token.isEmpty else {
            throw ValidationError("give a token with --token or SPOTSTORE_TOKEN (create one with `spotstore users add UID`)")
        }
        guard server.hasPrefix("http://") || server.hasPrefix("https://") else {
            throw ValidationError("--server must be an http:// or https:// URL, not '\(server)'")
        }
        return APIClient(baseURL: server.hasSuffix("/") ? String(server.dropLast()) : server, token: token)
    }
}

/// One object on the service, as client commands name it: `BUCKET/PATH`.
struct ObjectOptions: ParsableArguments {
    @OptionGroup var client: ClientOptions

    @Argument(help: ArgumentHelp("The object, like spots/eiffel/1.jpg.", valueName: "bucket/path"))
    var object: String

    /// The client, and the object's bucket and name.
    func resolve() throws -> (api: APIClient, bucket: String, name: String) {
        let api = try client.client()
        let (bucket, name) = try splitBucketPath(object, pathRequired: true)
        return (api, bucket, name)
    }
}

/// Splits `BUCKET/PATH` (or `BUCKET` alone when `pathRequired` is false).
func splitBucketPath(_ text: String, pathRequired: Bool) throws -> (bucket: String, path: String) {
    let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    guard let bucket = parts.first, !bucket.isEmpty, !pathRequired || (parts.count == 2 && !parts[1].isEmpty) else {
        throw ValidationError(pathRequired ? "expected BUCKET/PATH, like spots/eiffel/1.jpg; got '\(text)'" : "expected BUCKET or BUCKET/PREFIX; got '\(text)'")
    }
    return (bucket, parts.count == 2 ? parts[1] : "")
}

/// A thin client of the HTTP API; a non-2xx answer becomes a `SpotError` carrying the
/// server's message.
struct APIClient {
    let baseURL: String
    let token: String

    /// The URL of an object (`name` percent-encoded as one segment, as Firebase does).
    func objectURL(bucket: String, name: String, query: String = "") -> String {
        return "\(baseURL)/v0/b/\(bucket)/o/\(ObjectPath.urlSegment(name))\(query.isEmpty ? "" : "?" + query)"
    }

    /// The HTTP client of every client command: the shared client's settings, except that a
    /// connection the server refuses fails its request at once (the server is not running)
    /// rather than being retried for up to 90 s.
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Sends a request and returns the response after checking its status.
    func send(_ method: HTTPMethod, _ url: String, body: HTTPClientRequest.Body? = nil, contentType: String? = nil) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
        if let body { request.body = body }
        let response: HTTPClientResponse
        do {
            response = try await Self.http.execute(request, timeout: .minutes(30))
        } catch {
            throw SpotError(.internal, "cannot reach \(baseURL): \(error) (is `spotstore serve` running? set --server)")
        }
        guard (200..<300).contains(response.status.code) else {
            let bytes = try await response.body.collect(upTo: 1 << 20)
            let message = (try? APIJSON.decoder().decode(ErrorBody.self, from: Data(buffer: bytes)))?.error.message
                ?? String(buffer: bytes)
            throw SpotError(SpotError.Kind(httpStatusCode: Int(response.status.code)), "\(response.status.code) \(response.status.reasonPhrase): \(message)")
        }
        return response
    }

    /// Sends a request and decodes its JSON answer.
    func json<T: Decodable>(
        _ type: T.Type, _ method: HTTPMethod, _ url: String, body: HTTPClientRequest.Body? = nil, contentType: String? = nil
    ) async throws -> T {
        let response = try await send(method, url, body: body, contentType: contentType)
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return try APIJSON.decoder().decode(T.self, from: Data(buffer: bytes))
    }

}

/// A file's bytes as buffers for an HTTP body, read as the upload consumes them.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let path: String

    struct AsyncIterator: AsyncIteratorProtocol {
        var bytes: FileBytes.AsyncIterator
        mutating func next() async throws -> ByteBuffer? {
            try await bytes.next().map { ByteBuffer(bytes: $0) }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: FileBytes(path: path).makeAsyncIterator()) }
}

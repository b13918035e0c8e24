import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import S3Blobs
import SpotCore
import SpotService
import TestSupport

/// The real S3 server of the integration tests (`TestServers`, with the AWS_* credentials of
/// its environment), and small tools the tests share.
enum TestServices {
    static let environment = TestServers.environment
    /// Tests that need a server or botocore fail when it is missing instead of being skipped.
    static let required = TestServers.required
    static let s3Enabled = TestServers.s3Enabled

    /// A configuration for a new prefix of the test bucket (so the store starts empty), with
    /// quick retries.
    static func s3Configuration(endpoint: String? = nil) throws -> S3Configuration {
        let (configured, bucket) = try TestServers.s3()
        var configuration = try S3Configuration(
            blobs: "s3://\(bucket)/tests/\(UUID().uuidString)", endpoint: endpoint ?? configured, environment: environment)
        configuration.retry = RetryPolicy(attempts: 3, firstDelay: .milliseconds(50), maxDelay: .milliseconds(200))
        return configuration
    }

    /// Opens a store on a new prefix, hands it to `body`, then removes its blobs and shuts it down.
    static func withS3Store<T>(
        _ adjust: (inout S3Configuration) -> Void = { _ in }, _ body: (S3BlobStore, S3Configuration) async throws -> T
    ) async throws -> T {
        var configuration = try s3Configuration()
        adjust(&configuration)
        let store = try await S3BlobStore.open(configuration)
        do {
            let result = try await body(store, configuration)
            try await empty(store)
            try await store.shutdown()
            return result
        } catch {
            try? await empty(store)
            try? await store.shutdown()
            throw error
        }
    }

    /// Removes every blob of `store`.
    static func empty(_ store: S3BlobStore) async throws {
        for try await blob in store.allBlobs() { try await store.remove(blob.digest) }
    }

    /// A request signed like the store's, for what the port cannot do (plant a stray key, look
    /// at an ETag, list multipart uploads): status, headers and body as text.
    static func raw(
        _ method: HTTPMethod, _ configuration: S3Configuration, key: String?, query: [(name: String, value: String)] = [], body: [UInt8] = []
    ) async throws -> (status: UInt, headers: HTTPHeaders, body: String) {
        let path = "/\(configuration.location.bucket)" + (key.map { "/\($0)" } ?? "")
        let hash = BlobWriter.digest(of: body).hex
        let signer = AWSSignatureV4(credentials: configuration.credentials, region: configuration.region)
        let queryString = AWSSignatureV4.canonicalQuery(query)
        var request = HTTPClientRequest(url: configuration.endpoint.url + AWSSignatureV4.encodePath(path) + (queryString.isEmpty ? "" : "?\(queryString)"))
        request.method = method
        let headers = [("host", configuration.endpoint.authority), ("x-amz-content-sha256", hash)]
        for (name, value) in signer.sign(method: method.rawValue, path: path, query: query, headers: headers, payloadHash: hash, at: Date()) {
            request.headers.add(name: name, value: value)
        }
        request.body = .bytes(body)
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (response.status.code, response.headers, String(buffer: bytes))
    }

    /// Runs `command` (through env, so found on PATH) with `input` on stdin; its stdout. Fails
    /// on a non-zero exit, with its stderr.
    static func run(_ command: [String], input: Data) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        let (stdin, stdout, stderr) = (Pipe(), Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.runSerially()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SpotError(.internal, "\(command.joined(separator: " ")) failed: \(String(decoding: errors, as: UTF8.self))")
        }
        return output
    }
}

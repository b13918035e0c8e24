import Conformance
import Foundation
import S3Blobs
import SpotCore
import SpotService
import TestSupport
import Testing

/// The S3 blob store against a real S3 server (OpenStack Swift with s3api under bin/test):
/// the port's conformance suite, then what only an object store shows.
@Suite(.enabled(if: TestServices.s3Enabled, "needs an S3 server: `bin/test-services start`, then `. .build/test-services.env`"))
struct S3BlobStoreTests {
    /// The stores the conformance suite opened, to empty and shut down afterwards.
    actor OpenedStores {
        var stores: [S3BlobStore] = []
        func add(_ store: S3BlobStore) { stores.append(store) }
        func closeAll() async throws {
            for store in stores {
                try await TestServices.empty(store)
                try await store.shutdown()
            }
        }
    }

    @Test(arguments: BlobStoreConformance.clauses)
    func conformsToTheBlobStorePort(_ clause: BlobStoreConformance.Clause) async throws {
        let opened = OpenedStores()
        let scratch = NSTemporaryDirectory() + "s3-scratch-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        do {
            try await clause.check(BlobStoreConformance {
                let store = try await S3BlobStore.open(TestServices.s3Configuration())
                await opened.add(store)
                return (store, scratch)
            })
        } catch {
            try? await opened.closeAll()
            throw error
        }
        try await opened.closeAll()
    }

    /// `count` bytes that differ from part to part (xorshift), and their digest.
    func noise(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> (bytes: [UInt8], digest: Digest) {
        var state = seed
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[index] = UInt8(truncatingIfNeeded: state)
        }
        return (bytes, BlobWriter.digest(of: bytes))
    }

    /// Writes `bytes` to a new file; its path.
    func staged(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "s3-staged-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Whether multipart uploads are under way below the configuration's prefix.
    func uploadsInProgress(_ configuration: S3Configuration) async throws -> Bool {
        let listing = try await TestServices.raw(.GET, configuration, key: nil, query: [("uploads", ""), ("prefix", configuration.location.prefix)])
        #expect(listing.status == 200, "\(listing.body)")
        return listing.body.contains("<UploadId>")
    }

    @Test func storesALargeFileInPartsByteForByte() async throws {
        try await TestServices.withS3Store({
            $0.multipartThreshold = 5 << 20
            $0.partSize = 5 << 20
        }) { store, configuration in
            let (bytes, digest) = noise((12 << 20) + 12_345)
            let path = try staged(bytes)
            try await store.store(fileAt: path, as: digest)
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(try await store.size(of: digest) == Int64(bytes.count))
            #expect(try await store.read(digest) == bytes)
            let boundary = 5 << 20
            #expect(try await store.read(digest, offset: Int64(boundary - 10), count: 20) == Array(bytes[(boundary - 10)..<(boundary + 10)]))
            #expect(try await store.read(digest, offset: Int64(bytes.count - 5), count: 100) == Array(bytes.suffix(5)))
            let head = try await TestServices.raw(.HEAD, configuration, key: store.key(of: digest))
            #expect(head.headers.first(name: "etag")?.hasSuffix("-3\"") == true, "three parts: \(head.headers)")
            #expect(try await !uploadsInProgress(configuration))
        }
    }

    /// The store sends the digest as `x-amz-content-sha256`; the server refuses other bytes,
    /// from a file or from memory, and keeps nothing.
    @Test func theObjectStoreRefusesBytesThatAreNotTheDigests() async throws {
        try await TestServices.withS3Store { store, _ in
            let bytes = Array("the bytes that were uploaded".utf8)
            let wrong = BlobWriter.digest(of: Array("the bytes that were hashed".utf8))
            let path = try staged(bytes)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let fromFile = await #expect(throws: SpotError.self) { try await store.store(fileAt: path, as: wrong) }
            let refusedBytes = "the object store refused the bytes: they do not have the SHA-256 sent with them (BadDigest)"
            #expect(fromFile?.kind == .internal && fromFile?.message == "cannot store blob \(wrong): \(refusedBytes)", "\(String(describing: fromFile))")
            let fromMemory = await #expect(throws: SpotError.self) { try await store.store(bytes, as: wrong) }
            #expect(fromMemory?.kind == .internal && fromMemory?.message == "cannot store blob \(wrong): \(refusedBytes)", "\(String(describing: fromMemory))")
            #expect(try await store.size(of: wrong) == nil)
            #expect(try await store.blobs(after: nil, limit: 10).isEmpty)
        }
    }

    /// In parts, each part is checked by the server against its own hash, and the whole
    /// file against the digest before the upload is completed: wrong bytes leave nothing.
    @Test func aMultipartUploadOfOtherBytesIsAborted() async throws {
        try await TestServices.withS3Store({
            $0.multipartThreshold = 5 << 20
            $0.partSize = 5 << 20
        }) { store, configuration in
            let (bytes, _) = noise(6 << 20)
            let wrong = noise(10, seed: 7).digest
            let path = try staged(bytes)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let error = await #expect(throws: SpotError.self) { try await store.store(fileAt: path, as: wrong) }
            #expect(error?.kind == .internal && error?.message.hasSuffix(": the file's bytes do not have that SHA-256") == true, "\(String(describing: error))")
            #expect(try await store.size(of: wrong) == nil)
            #expect(try await !uploadsInProgress(configuration))
        }
    }

    /// Parts below S3's 5 MiB minimum make the server refuse the completion; the upload is
    /// aborted and nothing is stored.
    @Test func aRefusedCompletionAbortsTheUpload() async throws {
        try await TestServices.withS3Store({
            $0.multipartThreshold = 1 << 20
            $0.partSize = 1 << 20
        }) { store, configuration in
            let (bytes, digest) = noise(3 << 20)
            let path = try staged(bytes)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let error = await #expect(throws: SpotError.self) { try await store.store(fileAt: path, as: digest) }
            #expect(error?.kind == .internal && error?.message.contains("answered 400 EntityTooSmall") == true, "\(String(describing: error))")
            #expect(try await store.size(of: digest) == nil)
            #expect(try await !uploadsInProgress(configuration))
        }
    }

    /// An empty blob: stored, sized, read (no range of it is satisfiable) and listed.
    @Test func storesAnEmptyBlob() async throws {
        try await TestServices.withS3Store { store, _ in
            let empty = BlobWriter.digest(of: [])
            try await store.store([], as: empty)
            #expect(try await store.size(of: empty) == 0)
            #expect(try await store.read(empty, offset: 0, count: 10) == [])
            #expect(try await store.read(empty) == [])
            #expect(try await store.blobs(after: nil, limit: 10) == [StoredBlob(digest: empty, size: 0)])
        }
    }

    /// Keys under the prefix that are not a digest's are skipped, also when they fill whole
    /// pages before the first blob.
    @Test func enumerationSkipsKeysThatAreNotBlobs() async throws {
        try await TestServices.withS3Store { store, configuration in
            let bytes = Array("a blob".utf8)
            let digest = BlobWriter.digest(of: bytes)
            try await store.store(bytes, as: digest)
            let prefix = configuration.location.prefix
            let strays = ["sha256/0-not-a-digest", "sha256/\(digest.hex.uppercased())", "sha256/\(digest.hex).tmp", "sha256/\(digest.hex)/x", "other/\(digest.hex)"]
            for stray in strays {
                #expect(try await TestServices.raw(.PUT, configuration, key: prefix + stray, body: [1]).status == 200)
            }
            #expect(try await store.blobs(after: nil, limit: 1) == [StoredBlob(digest: digest, size: 6)])
            #expect(try await store.blobs(after: nil, limit: 10) == [StoredBlob(digest: digest, size: 6)])
            for stray in strays {
                #expect(try await TestServices.raw(.DELETE, configuration, key: prefix + stray).status == 204)
            }
        }
    }

    /// A missing bucket, bad credentials, a refused connection and a web server that is not
    /// S3 each stop `open` with one line that says which and what to do.
    /// Bounded: a hang fails the test at its time limit.
    @Test(.timeLimit(.minutes(1))) func openSaysWhatIsWrongInOneLine() async throws {
        let good = try TestServices.s3Configuration()
        /// The message of the error `open` throws, checked to be one line of `kind`.
        func openFails(_ kind: SpotError.Kind, _ adjust: (inout S3Configuration) throws -> Void) async throws -> String {
            var configuration = good
            try adjust(&configuration)
            let error = await #expect(throws: SpotError.self) { _ = try await S3BlobStore.open(configuration) }
            let message = error?.message ?? ""
            #expect(error?.kind == kind, "\(String(describing: error))")
            #expect(!message.contains("\n"), "one line: \(message)")
            return message
        }

        let missing = try await openFails(.internal) { $0.location = try S3Location(url: "s3://spotstore-missing-\(UUID().uuidString.prefix(8).lowercased())") }
        #expect(missing.contains("does not exist") && missing.contains("create it first"), "\(missing)")

        let badSecret = try await openFails(.internal) { $0.credentials.secretAccessKey = "not the secret" }
        #expect(badSecret.contains("bad credentials") && badSecret.contains("AWS_SECRET_ACCESS_KEY"), "\(badSecret)")
        let unknownKey = try await openFails(.internal) { $0.credentials.accessKeyID = "nobody:none" }
        #expect(unknownKey.contains("bad credentials") && unknownKey.contains("AWS_ACCESS_KEY_ID"), "\(unknownKey)")

        let gone = try TCPRelay(to: "silent")
        gone.stop()
        let refused = try await openFails(.unavailable) { $0.endpoint = try S3Endpoint("http://127.0.0.1:\(gone.port)") }
        #expect(refused.contains("cannot reach the S3 endpoint http://127.0.0.1:\(gone.port)") && refused.contains("is it running? check --s3-endpoint"), "\(refused)")

        let website = try TCPRelay(to: "http")
        defer { website.stop() }
        let notS3 = try await openFails(.internal) { $0.endpoint = try S3Endpoint("http://127.0.0.1:\(website.port)") }
        #expect(notS3.contains("did not answer a listing like an S3 server: check --s3-endpoint"), "\(notS3)")
    }

    /// An object store that goes away while in use: every call fails with `.unavailable`
    /// saying so after the policy's few retries, soon (a health check after one try), and
    /// nothing crashes; once it is back, the same store works again.
    @Test(.timeLimit(.minutes(1))) func aServerThatGoesAwayGivesAClearErrorSoonAndIsUsedAgainOnceBack() async throws {
        let direct = try TestServices.s3Configuration()
        let relay = try TCPRelay(to: direct.endpoint.authority)
        defer { relay.stop() }
        var configuration = direct
        configuration.endpoint = try S3Endpoint("http://127.0.0.1:\(relay.port)")
        let store = try await S3BlobStore.open(configuration)
        let bytes = Array("stored before it went away".utf8)
        let digest = BlobWriter.digest(of: bytes)
        try await store.store(bytes, as: digest)
        #expect(try await store.read(digest) == bytes)

        relay.stop()
        let reading = await #expect(throws: SpotError.self) { try await store.read(digest, offset: 0, count: 10) }
        #expect(reading?.kind == .unavailable)
        #expect(reading?.message.contains("cannot reach the S3 endpoint") == true && reading?.message.contains("after 3 attempts") == true, "\(reading?.message ?? "")")
        let storing = await #expect(throws: SpotError.self) { try await store.store(bytes, as: digest) }
        let listing = await #expect(throws: SpotError.self) { try await store.blobs(after: nil, limit: 10) }
        for error in [storing, listing] {
            #expect(error?.kind == .unavailable && error?.message.contains("cannot reach the S3 endpoint") == true, "\(String(describing: error))")
        }
        let health = await #expect(throws: SpotError.self) { try await store.checkHealth() }
        #expect(health?.kind == .unavailable && health?.message.contains("after 1 attempt:") == true, "\(health?.message ?? "")")

        try relay.restart()
        try await store.checkHealth()
        #expect(try await store.read(digest) == bytes)
        try await store.shutdown()

        let cleanup = try await S3BlobStore.open(direct)
        try await TestServices.empty(cleanup)
        try await cleanup.shutdown()
    }

    /// 503 SlowDown is tried again after a backoff, up to the policy's attempts.
    @Test func slowDownIsRetriedAFewTimes() async throws {
        var configuration = try TestServices.s3Configuration()
        let server = configuration.endpoint.authority
        let twice = try TCPRelay(to: "slowdown:2:\(server)")
        defer { twice.stop() }
        configuration.endpoint = try S3Endpoint("http://127.0.0.1:\(twice.port)")
        let store = try await S3BlobStore.open(configuration)
        try await store.shutdown()

        let always = try TCPRelay(to: "slowdown:3:\(server)")
        defer { always.stop() }
        configuration.endpoint = try S3Endpoint("http://127.0.0.1:\(always.port)")
        let error = await #expect(throws: SpotError.self) { _ = try await S3BlobStore.open(configuration) }
        #expect(error?.kind == .unavailable)
        #expect(error?.message.contains("answered 503 SlowDown after 3 attempts") == true, "\(error?.message ?? "")")

        // One try (as /healthz?deep=1 makes) is reported as one.
        let once = try TCPRelay(to: "slowdown:1:\(server)")
        defer { once.stop() }
        configuration.endpoint = try S3Endpoint("http://127.0.0.1:\(once.port)")
        configuration.retry = RetryPolicy(attempts: 1)
        let single = await #expect(throws: SpotError.self) { _ = try await S3BlobStore.open(configuration) }
        #expect(single?.kind == .unavailable && single?.message.contains("answered 503 SlowDown after 1 attempt:") == true, "\(String(describing: single))")
    }

    /// A server that accepts connections and never answers: the idle timeout ends each try.
    /// Bounded: a hang fails the test at its time limit.
    @Test(.timeLimit(.minutes(1))) func aServerThatStopsAnsweringTimesOut() async throws {
        let silent = try TCPRelay(to: "silent")
        defer { silent.stop() }
        var configuration = try TestServices.s3Configuration()
        configuration.endpoint = try S3Endpoint("http://127.0.0.1:\(silent.port)")
        configuration.idleTimeout = .seconds(1)
        configuration.retry.attempts = 2
        let error = await #expect(throws: SpotError.self) { _ = try await S3BlobStore.open(configuration) }
        #expect(error?.kind == .unavailable)
        #expect(error?.message.contains("no data within the idle timeout") == true, "\(error?.message ?? "")")
    }
}

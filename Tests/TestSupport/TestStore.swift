import Access
import BlobStores
import Catalogs
import Foundation
import Geocoder
import SQLCatalog
import SpotCore
import SpotService

/// The repository's `fixtures/` directory.
public let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("fixtures").path

/// The bytes of `fixtures/<name>`.
public func fixture(_ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(fixturesDirectory)/\(name)")))
}

/// The bundled offline geocoder, loaded once for all tests.
public let bundledGeocoder: OfflineGeocoder = try! OfflineGeocoder.bundled()

/// A real store in a fresh temp directory: SQLite file catalog, file-system blobs, the
/// default rules and the bundled geocoder.
public struct TestStore: Sendable {
    public let root: String
    public let service: StorageService
    /// The key signed URLs are made with.
    public let signingKey: [UInt8] = (0..<32).map { UInt8($0 * 7 % 256) }
    /// The access rules the service decides with.
    public let rules: RulesPolicy
    /// The time every instance's service reads.
    public let clock = TestClock()
    /// Where upload sessions keep their bytes.
    public let sessionBytes: SessionBytes
    /// Unfinished upload sessions one user may have open.
    public let maxOpenUploadSessions: Int

    /// Where a store's upload sessions keep their bytes: one file each under `uploads/`, as
    /// the embedded store does, or each chunk as a blob, as with an object store.
    public enum SessionBytes: String, CaseIterable, Sendable {
        case files, chunkBlobs
    }

    /// - Parameters:
    ///   - rules: the access rules (default: the default rules file).
    ///   - sessionBytes: where upload sessions keep their bytes (default: files, as `serve` does).
    ///   - maxOpenUploadSessions: unfinished upload sessions one user may have open (default: the service's).
    public init(
        rules: String = RulesPolicy.defaultText, sessionBytes: SessionBytes = .files,
        maxOpenUploadSessions: Int = ServiceConfiguration(temporaryDirectory: "").maxOpenUploadSessions
    ) throws {
        root = NSTemporaryDirectory() + "spotstore-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        self.rules = try RulesPolicy(text: rules, fileName: "rules")
        self.sessionBytes = sessionBytes
        self.maxOpenUploadSessions = maxOpenUploadSessions
        service = try Self.service(
            on: root, instance: "tmp", rules: self.rules, signingKey: signingKey, clock: clock, sessionBytes: sessionBytes,
            maxOpenUploadSessions: maxOpenUploadSessions)
    }

    /// Another service on the same store, as another process would open it: its own
    /// catalog connections, blob store, upload coordinator and temp directory `instance`;
    /// its upload sessions keep their bytes as this store's do unless `sessionBytes` says.
    public func otherInstance(_ instance: String, sessionBytes: SessionBytes? = nil) throws -> StorageService {
        try Self.service(
            on: root, instance: instance, rules: rules, signingKey: signingKey, clock: clock, sessionBytes: sessionBytes ?? self.sessionBytes,
            maxOpenUploadSessions: maxOpenUploadSessions)
    }

    private static func service(
        on root: String, instance: String, rules: RulesPolicy, signingKey: [UInt8], clock: TestClock, sessionBytes: SessionBytes,
        maxOpenUploadSessions: Int
    ) throws -> StorageService {
        let catalog = try SQLiteCatalog(path: "\(root)/catalog.sqlite")
        // As `serve` composes them: small blobs in the catalog, the others files.
        let files = try FileSystemBlobStore(root: "\(root)/blobs", temporaryDirectory: "\(root)/\(instance)")
        return try StorageService(
            catalog: catalog, blobs: TieredBlobStore(database: catalog.database, large: files),
            policy: rules,
            geocoder: bundledGeocoder,
            configuration: ServiceConfiguration(
                temporaryDirectory: "\(root)/\(instance)", signingKey: signingKey, quarantineDirectory: "\(root)/quarantine",
                maxOpenUploadSessions: maxOpenUploadSessions, uploadSessionDirectory: sessionBytes == .files ? "\(root)/uploads" : nil,
                now: { clock.now }))
    }

    /// Creates a user and returns it with its token.
    public func user(_ uid: String) async throws -> (user: User, token: String) {
        try await service.addUser(uid)
    }

    /// Creates a user holding the admin role and returns its token.
    public func admin(_ uid: String) async throws -> String {
        let (_, token) = try await user(uid)
        _ = try await service.setAdmin(of: uid, true)
        return token
    }

    /// Files in `tmp/` (uploads in flight or leftovers).
    public func temporaryFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "\(root)/tmp")
    }

    /// Where the file-system blob store keeps blob `digest` (when it is not small enough for
    /// the catalog).
    private func blobPath(_ digest: Digest) -> String {
        "\(root)/blobs/sha256/\(digest.hex.prefix(2))/\(digest.hex.dropFirst(2).prefix(2))/\(digest.hex)"
    }

    /// Where upload sessions keep their bytes as files (`sessionBytes == .files`).
    public var uploadsDirectory: String { "\(root)/uploads" }

    /// The upload sessions' files under `uploads/` and every blob (where chunks are blobs):
    /// all the places the bytes of an upload session can be.
    public func heldUploadBytes() async throws -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: uploadsDirectory)) ?? []
        return files.map { "uploads/\($0)" } + (try await storedBlobs()).map { "blob \($0.digest)" }
    }

    /// Every blob the store holds, whether a file or a row of the catalog (`TieredBlobStore`).
    public func storedBlobs() async throws -> [StoredBlob] {
        var blobs: [StoredBlob] = []
        for try await blob in service.blobs.allBlobs() { blobs.append(blob) }
        return blobs
    }

    /// Replaces the bytes of blob `digest` with `change(bytes)` where the store keeps them
    /// (its file, or its row in the catalog), as damage on the disk would.
    public func damageBlob(_ digest: Digest, _ change: @escaping @Sendable ([UInt8]) -> [UInt8]) async throws {
        if let bytes = FileManager.default.contents(atPath: blobPath(digest)) {
            return try Data(change([UInt8](bytes))).write(to: URL(fileURLWithPath: blobPath(digest)))
        }
        guard let database = (service.catalog as? SQLiteCatalog)?.database else { throw SpotError(.internal, "the test store's catalog is SQLite") }
        guard let row = try await database.query("SELECT bytes FROM small_blobs WHERE digest = \(digest.hex)").first else {
            throw SpotError(.notFound, "the store holds no blob \(digest)")
        }
        let changed = change(try row(0))
        try await database.write { try await $0.run("UPDATE small_blobs SET bytes = \(changed) WHERE digest = \(digest.hex)") }
    }
}

/// `bytes` as a one-chunk async body.
public func body(_ bytes: [UInt8], chunkSize: Int = 64 * 1024) -> AsyncStream<ArraySlice<UInt8>> {
    AsyncStream { continuation in
        for start in stride(from: 0, to: bytes.count, by: chunkSize) {
            continuation.yield(bytes[start..<min(start + chunkSize, bytes.count)])
        }
        continuation.finish()
    }
}

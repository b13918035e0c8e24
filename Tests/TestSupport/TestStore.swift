import Access
import BlobStores
import Catalogs
import Foundation
import Geocoder
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

    /// - Parameter rules: the access rules (default: the default rules file).
    public init(rules: String = RulesPolicy.defaultText) throws {
        root = NSTemporaryDirectory() + "spotstore-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        service = try StorageService(
            catalog: try SQLiteCatalog(path: "\(root)/catalog.sqlite"),
            blobs: try FileSystemBlobStore(root: "\(root)/blobs"),
            policy: try RulesPolicy(text: rules, fileName: "rules"),
            geocoder: bundledGeocoder,
            configuration: ServiceConfiguration(temporaryDirectory: "\(root)/tmp", signingKey: signingKey))
    }

    /// Creates a user and returns it with its token.
    public func user(_ uid: String) async throws -> (user: User, token: String) {
        try await service.addUser(uid)
    }

    /// Files in `tmp/` (uploads in flight or leftovers).
    public func temporaryFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "\(root)/tmp")
    }

    /// Every file under `blobs/` (relative paths): blobs, and temp files of writes in
    /// progress or left behind; not the lock file gc and stores share.
    public func blobFiles() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: "\(root)/blobs")
        var files: [String] = []
        while let next = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: "\(root)/blobs/\(next)", isDirectory: &isDirectory), !isDirectory.boolValue, next != "removal.lock" {
                files.append(next)
            }
        }
        return files
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

import Access
import BlobStores
import Catalogs
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Geocoder
import Logging
import PostgresCatalog
import S3Blobs
import SQLCatalog
import SpotCore
import SpotServer
import SpotService
import Synchronization

/// A store: the embedded default on disk (`catalog.sqlite`, `blobs/`, `uploads/`, `tmp/`,
/// `quarantine/` under one root), or with its catalog in PostgreSQL and/or its blobs in an S3 bucket
/// (`backends`); the root then keeps only temp files, quarantine and the rules file.
/// This is the one place that picks concrete backends.
struct StoreLayout {
    let root: String
    /// `--tmp`: this process's own temp directory; `nil` takes a new one under `tmp/`.
    var temporaryDirectory: String?
    /// `--catalog`, `--blobs`, `--s3-endpoint`.
    var backends = Backends.embedded

    var catalogPath: String { "\(root)/catalog.sqlite" }
    var blobsPath: String { "\(root)/blobs" }
    var temporaryPath: String { "\(root)/tmp" }
    var quarantinePath: String { "\(root)/quarantine" }
    /// Where upload sessions keep their bytes while the blobs are files here.
    var uploadsPath: String { "\(root)/uploads" }
    /// Where SpotStore before 2026-11 kept the URL-signing key; moved into the catalog.
    var secretKeyPath: String { "\(root)/secret.key" }
    /// The default rules file, written with `RulesPolicy.defaultText` on first start.
    var rulesPath: String { "\(root)/rules" }

    /// Runs `body` with the service on this store, opened (created when new) with this
    /// process's own temp directory (emptied), and closes the backends' connections after.
    /// `serving` adds what only the server needs: the bundled geocoder and the URL-signing
    /// key every instance shares (`signing` adds the key alone). Admin commands never consult
    /// `policy`; it defaults to the default rules. `signingKeyFile` replaces the catalog's key
    /// (give every instance the same file).
    func withService<Result>(
        serving: Bool = false, signing: Bool = false, policy: (any AccessPolicy)? = nil, signingKeyFile: String? = nil,
        configure: (inout ServiceConfiguration) -> Void = { _ in },
        _ body: (StorageService) async throws -> Result
    ) async throws -> Result {
        try prepareRoot()
        let temporary = try temporaryDirectory ?? Self.processTemporaryDirectory(under: temporaryPath)
        let (catalog, keepingSmallBlobs, closeCatalog) = try await openCatalog()
        let blobs: any BlobStore, closeBlobs: @Sendable () async -> Void
        do {
            let (large, close) = try await openBlobs(temporaryDirectory: temporary)
            (blobs, closeBlobs) = (keepingSmallBlobs(large), close)
        } catch {
            await closeCatalog()
            throw error
        }
        let closeBackends = { await closeBlobs(); await closeCatalog() }
        do {
            var configuration = ServiceConfiguration(
                temporaryDirectory: temporary, signingKey: serving || signing ? try await signingKey(in: catalog, file: signingKeyFile) : nil,
                quarantineDirectory: quarantinePath, uploadSessionDirectory: backends.blobsURL == nil ? uploadsPath : nil)
            configure(&configuration)
            let service = try StorageService(
                catalog: catalog, blobs: blobs,
                policy: try policy ?? RulesPolicy(text: RulesPolicy.defaultText, fileName: "default rules"),
                geocoder: serving ? try OfflineGeocoder.bundled() : nil, configuration: configuration)
            try service.sweepTemporaryFiles()
            let result = try await body(service)
            await closeBackends()
            return result
        } catch {
            await closeBackends()
            throw error
        }
    }

    /// Whether the catalog is the embedded `catalog.sqlite` under the root.
    var hasEmbeddedCatalog: Bool { backends.catalogURL == nil }

    /// The kinds of backends `withService` opens, as `/healthz` names them.
    var backendNames: BackendNames {
        BackendNames(catalog: hasEmbeddedCatalog ? "sqlite" : "postgresql", blobs: backends.blobsURL == nil ? "files" : "s3")
    }

    /// The catalog `backends` name; the blob store that keeps small blobs in its database
    /// and the rest in a given store (`TieredBlobStore`); and how to close it.
    private func openCatalog() async throws -> (any Catalog, keepingSmallBlobs: (any BlobStore) -> any BlobStore, close: @Sendable () async -> Void) {
        guard let url = backends.catalogURL else {
            let catalog = try SQLiteCatalog(path: catalogPath)
            return (catalog, { TieredBlobStore(database: catalog.database, large: $0) }, {})
        }
        let catalog = try await Self.connectPostgres(url)
        return (catalog, { TieredBlobStore(database: catalog.database, large: $0) }, { await catalog.close() })
    }

    /// The PostgreSQL catalog at `url`, logging warnings and errors.
    static func connectPostgres(_ url: String) async throws -> PostgresCatalog {
        var logger = Logger(label: "spotstore.catalog")
        logger.logLevel = .warning
        return try await PostgresCatalog.connect(url: url, logger: logger)
    }

    /// The store `backends` name for blobs larger than the catalog keeps, and how to close it.
    func openBlobs(temporaryDirectory: String) async throws -> (any BlobStore, @Sendable () async -> Void) {
        guard let url = backends.blobsURL else {
            return (try FileSystemBlobStore(root: blobsPath, temporaryDirectory: temporaryDirectory), {})
        }
        let store = try await S3BlobStore.open(S3Configuration(blobs: url, endpoint: backends.s3Endpoint, environment: backends.environment))
        return (store, { try? await store.shutdown() })
    }

    /// The temp directory of this process, taken once (see `ProcessTemporaryDirectory`).
    private static func processTemporaryDirectory(under parent: String) throws -> String {
        try processDirectory.withLock { taken in
            if let taken, taken.path.hasPrefix(parent + "/") { return taken.path }
            let directory = try ProcessTemporaryDirectory(under: parent)
            taken = directory
            return directory.path
        }
    }

    private static let processDirectory = Mutex<ProcessTemporaryDirectory?>(nil)

    /// The URL-signing key every instance shares: the bytes of `file` when given (at least
    /// 32), else the one kept in the catalog, where the first process stores 32 random
    /// bytes (or the key file of an older store, so its URLs keep working).
    func signingKey(in catalog: any Catalog, file: String?) async throws -> [UInt8] {
        if let file {
            guard let key = FileManager.default.contents(atPath: file) else {
                throw SpotError(.notFound, "cannot read the signing key file \(file)")
            }
            guard key.count >= 32 else {
                throw SpotError(.badRequest, "the signing key file \(file) holds \(key.count) bytes; use at least 32 random bytes (head -c 32 /dev/urandom > \(file))")
            }
            return [UInt8](key)
        }
        if let legacy = FileManager.default.contents(atPath: secretKeyPath), legacy.count == 32 {
            return try await catalog.signingKey(orStore: [UInt8](legacy))
        }
        var generator = SystemRandomNumberGenerator()
        return try await catalog.signingKey(orStore: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Creates the store's folder when missing.
    /// - Throws: when it is not writable, saying so (SQLite would say only "unable to open
    ///   database file").
    func prepareRoot() throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        guard access(root, W_OK) == 0 else {
            throw SpotError(.internal, "the store \(root) is not writable (\(String(cString: strerror(errno)))): SpotStore keeps the catalog's journal, temp files and blobs there, even to read")
        }
    }

    /// The rules in `file`, or in `rules` of the store (written from the default rules
    /// when absent).
    /// - Throws: `RulesError` listing every problem with line and column; a missing `file`.
    func loadRules(from file: String?) throws -> RulesPolicy {
        let path = file ?? rulesPath
        if file == nil, !FileManager.default.fileExists(atPath: path) {
            try prepareRoot()
            try Data(RulesPolicy.defaultText.utf8).write(to: URL(fileURLWithPath: path), options: .withoutOverwriting)
        }
        return try RulesPolicy(text: try readRules(path), fileName: path)
    }
}

/// The text of the rules file at `path`.
/// - Throws: `SpotError(.notFound)` naming the file when it cannot be read.
func readRules(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
        throw SpotError(.notFound, "cannot read the rules file \(path) (missing, unreadable or not UTF-8)")
    }
    return text
}

import Access
import BlobStores
import Catalogs
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Geocoder
import SpotCore
import SpotService

/// The embedded default store on disk: `catalog.sqlite`, `blobs/`, `tmp/` under one root.
/// This is the one place that picks concrete backends.
struct StoreLayout {
    let root: String

    var catalogPath: String { "\(root)/catalog.sqlite" }
    var blobsPath: String { "\(root)/blobs" }
    var temporaryPath: String { "\(root)/tmp" }
    var secretKeyPath: String { "\(root)/secret.key" }
    /// The default rules file, written with `RulesPolicy.defaultText` on first start.
    var rulesPath: String { "\(root)/rules" }

    /// Opens (creating when new) the catalog, blob store and service on this layout;
    /// `serving` adds what only the server needs: the bundled geocoder and the URL-signing key.
    /// Admin commands never consult `policy`; it defaults to the default rules.
    func openService(serving: Bool = false, policy: (any AccessPolicy)? = nil) throws -> StorageService {
        try prepareRoot()
        return try StorageService(
            catalog: try SQLiteCatalog(path: catalogPath),
            blobs: try FileSystemBlobStore(root: blobsPath),
            policy: try policy ?? RulesPolicy(text: RulesPolicy.defaultText, fileName: "default rules"),
            geocoder: serving ? try OfflineGeocoder.bundled() : nil,
            configuration: ServiceConfiguration(temporaryDirectory: temporaryPath, signingKey: serving ? try secretKey() : nil))
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

    /// The HMAC key for signed URLs: 32 random bytes in `secret.key`, created with mode 0600
    /// on first use. A key file of another size is refused rather than trusted.
    func secretKey() throws -> [UInt8] {
        // Created 0600 from the start (never readable by others, not even briefly); O_EXCL
        // keeps a concurrent first start from writing a second key.
        let fd = open(secretKeyPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            var generator = SystemRandomNumberGenerator()
            let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let written = key.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            let synced = fsync(fd) == 0
            close(fd)
            guard written == key.count, synced else {
                unlink(secretKeyPath)
                throw SpotError(.internal, "cannot write \(secretKeyPath)")
            }
        }
        let key = [UInt8](try Data(contentsOf: URL(fileURLWithPath: secretKeyPath)))
        guard key.count == 32 else {
            throw SpotError(.internal, "\(secretKeyPath) must hold exactly 32 bytes; remove it to make a new key (signed URLs made with the old one stop working)")
        }
        return key
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

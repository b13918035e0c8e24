import Access
import BlobStores
import Catalogs
import Foundation
import Geocoder
import SpotService

/// The embedded default store on disk: `catalog.sqlite`, `blobs/`, `tmp/` under one root.
/// This is the one place that picks concrete backends.
struct StoreLayout {
    let root: String

    var catalogPath: String { "\(root)/catalog.sqlite" }
    var blobsPath: String { "\(root)/blobs" }
    var temporaryPath: String { "\(root)/tmp" }

    /// Opens (creating when new) the catalog, blob store and service on this layout;
    /// with `geocoding`, uploads are geocoded with the bundled offline geocoder.
    func openService(geocoding: Bool = false) throws -> StorageService {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return try StorageService(
            catalog: try SQLiteCatalog(path: catalogPath),
            blobs: try FileSystemBlobStore(root: blobsPath),
            policy: DefaultPolicy(),
            geocoder: geocoding ? try OfflineGeocoder.bundled() : nil,
            configuration: ServiceConfiguration(temporaryDirectory: temporaryPath))
    }
}

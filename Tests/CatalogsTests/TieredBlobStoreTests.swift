import BlobStores
import Catalogs
import Conformance
import Foundation
import PostgresCatalog
import SQLCatalog
import SpotCore
import SpotService
import Testing

/// The blob store that keeps small blobs in the catalog's database: the port's conformance
/// suite on every catalog backend (with files for the larger blobs), then what only tiers show.
@Suite struct TieredBlobStoreTests {
    /// Runs `body` with a new tiered store on `backend`, its large tier the files under a
    /// new folder, and a folder for staging files.
    static func withStore(
        on backend: CatalogBackend, _ body: @escaping (any BlobStore, FileSystemBlobStore, String) async throws -> Void
    ) async throws {
        try await withStoreAndCatalog(on: backend) { store, _, large, scratch in try await body(store, large, scratch) }
    }

    /// As `withStore`, with the catalog whose database keeps the small blobs.
    static func withStoreAndCatalog(
        on backend: CatalogBackend, _ body: @escaping (any BlobStore, any Catalog, FileSystemBlobStore, String) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { folder in
            let large = try FileSystemBlobStore(root: folder.path + "/blobs", temporaryDirectory: folder.path + "/tmp")
            try await backend.withCatalog { catalog in
                try await body(Self.tiered(try Self.database(of: catalog), large: large), catalog, large, folder.path + "/tmp")
            }
        }
    }

    /// The database of `catalog`, SQLite or PostgreSQL.
    static func database(of catalog: any Catalog) throws -> any CatalogDatabase {
        if let catalog = catalog as? SQLiteCatalog { return catalog.database }
        return try #require(catalog as? PostgresCatalog).database
    }

    /// The tiered store over `database`, whichever it is.
    static func tiered(_ database: some CatalogDatabase, large: any BlobStore) -> any BlobStore {
        TieredBlobStore(database: database, large: large)
    }

    @Test(arguments: CatalogBackend.allCases, BlobStoreConformance.clauses)
    func conformsToTheBlobStorePort(_ backend: CatalogBackend, _ clause: BlobStoreConformance.Clause) async throws {
        try await Self.withStore(on: backend) { store, _, scratch in
            try await clause.check(BlobStoreConformance { (store, scratch) })
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func smallBlobsAreRowsAndLargerOnesGoToTheLargeStore(_ backend: CatalogBackend) async throws {
        try await Self.withStore(on: backend) { store, large, scratch in
            let limit = TieredBlobStore<SQLiteDatabase>.smallBlobLimit
            for size in [0, 1, limit, limit + 1] {
                let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ size) }
                let digest = BlobWriter.digest(of: bytes)
                let file = "\(scratch)/staged-\(size)"
                try Data(bytes).write(to: URL(fileURLWithPath: file))
                try await store.store(fileAt: file, as: digest)
                #expect(!FileManager.default.fileExists(atPath: file), "the staged file of \(size) bytes is gone")
                #expect(try await large.size(of: digest) == (size > limit ? Int64(size) : nil), "\(size) bytes in the large tier only past the limit")
                #expect(try await store.read(digest) == bytes)
            }
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aSmallBlobTheLargeStoreHoldsIsReadListedOnceAndRemovedThere(_ backend: CatalogBackend) async throws {
        try await Self.withStore(on: backend) { store, large, _ in
            let bytes = Array("stored as a file before the tiers".utf8)
            let digest = BlobWriter.digest(of: bytes)
            try await large.store(bytes, as: digest)
            #expect(try await store.read(digest) == bytes)
            #expect(try await store.blobs(after: nil, limit: 10) == [StoredBlob(digest: digest, size: Int64(bytes.count))])
            try await store.store(bytes, as: digest)
            #expect(try await store.blobs(after: nil, limit: 10) == [StoredBlob(digest: digest, size: Int64(bytes.count))], "in both tiers, listed once")
            try await store.remove(digest)
            #expect(try await store.size(of: digest) == nil)
            #expect(try await large.size(of: digest) == nil, "removed from the large tier too")
        }
    }

    /// A small blob whose row holds other bytes (damaged) gets the right ones when they are
    /// stored again, as a file would be written again.
    @Test(arguments: CatalogBackend.allCases)
    func storingTheBytesAgainMendsADamagedRow(_ backend: CatalogBackend) async throws {
        try await Self.withStoreAndCatalog(on: backend) { store, catalog, _, _ in
            let bytes = Array("bytes that rot".utf8)
            let digest = BlobWriter.digest(of: bytes)
            try await store.store(bytes, as: digest)
            let damaged = Array("bytes that ROT".utf8)
            try await Self.database(of: catalog).write { try await $0.run("UPDATE small_blobs SET bytes = \(damaged) WHERE digest = \(digest.hex)") }
            #expect(try await store.read(digest) == damaged)
            try await store.store(bytes, as: digest)
            #expect(try await store.read(digest) == bytes)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aCommitStoresTheSmallBlobItCarries(_ backend: CatalogBackend) async throws {
        try await Self.withStoreAndCatalog(on: backend) { store, catalog, large, _ in
            let bytes = Array("a note the commit stores".utf8)
            var new = try upload("notes/a.txt")
            (new.digest, new.size, new.smallBlob) = (BlobWriter.digest(of: bytes), Int64(bytes.count), bytes)
            let stored = try await catalog.commit(new, admission: SpotAdmission())
            #expect(stored.digest == new.digest)
            #expect(try await store.read(new.digest) == bytes)
            #expect(try await large.size(of: new.digest) == nil, "a row, not a file")
            #expect(try await store.blobs(after: nil, limit: 10) == [StoredBlob(digest: new.digest, size: Int64(bytes.count))])
        }
    }

    /// The commit takes the bytes' lock and looks for gc's claim, as a lease does: bytes gc
    /// is removing are not named by a new object, whose blob the removal would then take.
    @Test(arguments: CatalogBackend.allCases)
    func aCommitRefusesSmallBytesGcIsRemoving(_ backend: CatalogBackend) async throws {
        try await Self.withStoreAndCatalog(on: backend) { store, catalog, _, _ in
            let bytes = Array("bytes gc is removing".utf8)
            let digest = BlobWriter.digest(of: bytes)
            try await store.store(bytes, as: digest)
            #expect(try await catalog.claimForRemoval(digest, cutoff: Date(), now: Date()))
            var new = try upload("notes/b.txt")
            (new.digest, new.size, new.smallBlob) = (digest, Int64(bytes.count), bytes)
            let refusal = await #expect(throws: SpotError.self) { try await catalog.commit(new, admission: SpotAdmission()) }
            #expect(refusal?.kind == .unavailable)
            #expect(try await catalog.object(at: new.path) == nil, "nothing committed")
            try await store.remove(digest)
            try await catalog.endRemoval(digest)
            _ = try await catalog.commit(new, admission: SpotAdmission())
            #expect(try await store.read(digest) == bytes, "stored again by the commit once gc is done")
            #expect(try await !catalog.claimForRemoval(digest, cutoff: Date(), now: Date()), "named by the object now, gc leaves it")
        }
    }
}

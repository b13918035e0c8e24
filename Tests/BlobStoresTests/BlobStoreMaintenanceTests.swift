import BlobStores
import Foundation
import SpotCore
import SpotService
import Testing

/// The maintenance part of the `BlobStore` contract (inventory, quarantine, conditional
/// removal, fresh times on re-store), run against every implementation.
@Suite struct BlobStoreMaintenanceTests {
    @Test func inventoryListsBlobsWithSizesAndTimesAndNothingElse() async throws {
        for (name, store, _) in try BlobStoreConformance.implementations() {
            #expect(try await store.inventory().blobs.isEmpty, "\(name)")
            let a = Array("first".utf8), b = Array("second blob".utf8)
            let (da, db) = (BlobWriter.digest(of: a), BlobWriter.digest(of: b))
            let before = Date().addingTimeInterval(-2)
            try await store.store(a, as: da)
            try await store.store(b, as: db)
            // A write in progress beside a blob is not a blob.
            FileManager.default.createFile(atPath: store.location(of: da) + ".1234.tmp", contents: Data([1]))
            let inventory = try await store.inventory()
            #expect(inventory.blobs.map(\.digest) == [da, db].sorted(), "\(name)")
            #expect(inventory.blobs.map(\.size) == (da < db ? [5, 11] : [11, 5]), "\(name)")
            #expect(inventory.blobs.allSatisfy { $0.modified > before }, "\(name)")
            #expect(inventory.strays.count == 1, "\(name)")
        }
    }

    @Test func quarantineMovesAndNeverDeletes() async throws {
        for (name, store, _) in try BlobStoreConformance.implementations() {
            let bytes = Array("to quarantine".utf8)
            let digest = BlobWriter.digest(of: bytes)
            try await store.store(bytes, as: digest)
            let first = try #require(try await store.quarantine(digest), "\(name)")
            #expect(try await store.size(of: digest) == nil, "\(name): gone from the store")
            #expect(FileManager.default.contents(atPath: first) == Data(bytes), "\(name): kept byte for byte")
            try await store.store(bytes, as: digest)
            let second = try #require(try await store.quarantine(digest))
            #expect(second != first && FileManager.default.fileExists(atPath: first), "\(name): both kept")
            #expect(try await store.quarantine(digest) == nil, "\(name): absent")
        }
    }

    @Test func conditionalRemovalAndRestoringRefreshTheTime() async throws {
        for (name, store, _) in try BlobStoreConformance.implementations() {
            let bytes = Array("old".utf8)
            let digest = BlobWriter.digest(of: bytes)
            try await store.store(bytes, as: digest)
            let hourAgo = Date().addingTimeInterval(-3600)
            #expect(try await !store.remove(digest, ifModifiedBefore: hourAgo), "\(name): too young")
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: store.location(of: digest))
            try await store.store(bytes, as: digest)  // stored again: the time is fresh
            #expect(try await !store.remove(digest, ifModifiedBefore: hourAgo), "\(name): re-storing refreshes the time")
            #expect(try await store.remove(digest, ifModifiedBefore: Date().addingTimeInterval(1)), "\(name)")
            #expect(try await store.size(of: digest) == nil, "\(name)")
            #expect(try await !store.remove(digest, ifModifiedBefore: Date()), "\(name): missing is false, not an error")
        }
    }

    /// `gc` next to an upload of bytes the store already holds as an old, unreferenced blob:
    /// the blob is never removed between the upload finding it and refreshing its time, so
    /// after both it is there (before the removal lock, it could be gone: the upload's
    /// catalog commit would then name a missing blob).
    @Test func aBlobBeingStoredAgainIsNeverCollected() async throws {
        for (name, store, scratch) in try BlobStoreConformance.implementations() {
            let bytes = Array("an unreferenced blob, uploaded again".utf8)
            let digest = BlobWriter.digest(of: bytes)
            try await store.store(bytes, as: digest)
            for round in 0..<1000 {
                try FileManager.default.setAttributes(
                    [.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: store.location(of: digest))
                let (staged, _) = try BlobStoreConformance().stagedFile(bytes, in: scratch)
                async let collected = store.remove(digest, ifModifiedBefore: Date().addingTimeInterval(-3600))
                if round.isMultiple(of: 2) {
                    try await store.store(bytes, as: digest)
                } else {
                    try await store.store(fileAt: staged, as: digest)
                }
                _ = try await collected
                #expect(try await store.size(of: digest) == Int64(bytes.count), "\(name), round \(round)")
                try? FileManager.default.removeItem(atPath: staged)
            }
        }
    }

    /// A blob cut short on disk (a torn copy, a full disk during a restore) is replaced when
    /// the same bytes are stored again, through either store path, instead of the new upload
    /// being linked to the damaged file.
    /// A blob cut short, or with a flipped bit (same size), is replaced by the good bytes
    /// of the next store of its digest; the upload's bytes are never dropped for damaged ones.
    @Test(arguments: ["cut short", "flipped bit"])
    func storingAgainHealsADamagedBlob(damage: String) async throws {
        for (name, store, scratch) in try BlobStoreConformance.implementations() {
            let bytes = (0..<2_500_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let digest = BlobWriter.digest(of: bytes)
            for viaFile in [false, true] {
                try await store.store(bytes, as: digest)
                let handle = try FileHandle(forUpdating: URL(fileURLWithPath: store.location(of: digest)))
                if damage == "cut short" {
                    try handle.truncate(atOffset: 1000)
                } else {
                    // In the second 1 MiB chunk, so a comparison that stops early misses it.
                    try handle.seek(toOffset: 1_500_000)
                    try handle.write(contentsOf: [bytes[1_500_000] ^ 0x10])
                }
                try handle.close()
                #expect(try await store.read(digest) != bytes, "\(name): the damage took")
                if viaFile {
                    let (staged, _) = try BlobStoreConformance().stagedFile(bytes, in: scratch)
                    try await store.store(fileAt: staged, as: digest)
                    #expect(!FileManager.default.fileExists(atPath: staged))
                } else {
                    try await store.store(bytes, as: digest)
                }
                #expect(try await store.read(digest) == bytes, "\(name), \(damage), via file: \(viaFile)")
            }
        }
    }
}

import BlobStores
import Conformance
import Foundation
import SpotCore
import SpotService
import Testing

/// The file-system blob store: the port's conformance suite, then what only files show.
@Suite struct FileSystemBlobStoreTests {
    static func newStore() throws -> (store: FileSystemBlobStore, root: String) {
        let root = NSTemporaryDirectory() + "blobstore-\(UUID().uuidString)"
        return (try FileSystemBlobStore(root: root + "/blobs", temporaryDirectory: root + "/tmp"), root)
    }

    @Test(arguments: BlobStoreConformance.clauses)
    func conformsToTheBlobStorePort(_ clause: BlobStoreConformance.Clause) async throws {
        try await clause.check(BlobStoreConformance {
            let (store, root) = try Self.newStore()
            return (store, root + "/tmp")
        })
    }

    @Test func layoutIsShardedByDigestAndLeavesNoTempFiles() async throws {
        let (store, root) = try Self.newStore()
        let bytes = Array("layout".utf8)
        let digest = BlobWriter.digest(of: bytes)
        try await store.store(bytes, as: digest)
        let hex = digest.hex
        let expected = "\(root)/blobs/sha256/\(hex.prefix(2))/\(hex.dropFirst(2).prefix(2))/\(hex)"
        #expect(FileManager.default.contents(atPath: expected) == Data(bytes))
        #expect(try FileManager.default.contentsOfDirectory(atPath: (expected as NSString).deletingLastPathComponent) == [hex])
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(root)/tmp").isEmpty, "nor in the temp directory")
    }

    /// Files among the blobs that are not blobs (a stray, a name in the wrong shard) are never listed.
    @Test func enumerationSkipsFilesThatAreNotBlobs() async throws {
        let (store, root) = try Self.newStore()
        let bytes = Array("a blob".utf8)
        let digest = BlobWriter.digest(of: bytes)
        try await store.store(bytes, as: digest)
        let shard = (store.path(of: digest) as NSString).deletingLastPathComponent
        #expect(FileManager.default.createFile(atPath: shard + "/\(digest.hex).1234.tmp", contents: Data([1])))
        let other = BlobWriter.digest(of: Array("elsewhere".utf8))
        #expect(FileManager.default.createFile(atPath: shard + "/\(other.hex)", contents: Data([2])))
        #expect(try await store.blobs(after: nil, limit: 10) == [StoredBlob(digest: digest, size: 6)], "\(root)")
    }

    /// A blob cut short or with a flipped bit on disk is replaced by the good bytes of the
    /// next store of its digest, through either store path: an upload's bytes are never
    /// dropped for damaged ones.
    @Test(arguments: ["cut short", "flipped bit"])
    func storingAgainHealsADamagedBlob(damage: String) async throws {
        let (store, root) = try Self.newStore()
        let bytes = (0..<2_500_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let digest = BlobWriter.digest(of: bytes)
        for viaFile in [false, true] {
            try await store.store(bytes, as: digest)
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: store.path(of: digest)))
            if damage == "cut short" {
                try handle.truncate(atOffset: 1000)
            } else {
                // In the second 1 MiB chunk, so a comparison that stops early misses it.
                try handle.seek(toOffset: 1_500_000)
                try handle.write(contentsOf: [bytes[1_500_000] ^ 0x10])
            }
            try handle.close()
            #expect(try await store.read(digest) != bytes, "the damage took")
            if viaFile {
                let staged = root + "/tmp/staged-\(UUID().uuidString)"
                try Data(bytes).write(to: URL(fileURLWithPath: staged))
                try await store.store(fileAt: staged, as: digest)
            } else {
                try await store.store(bytes, as: digest)
            }
            #expect(try await store.read(digest) == bytes, "\(damage), via file: \(viaFile)")
        }
    }
}

@Suite struct BlobWriterTests {
    func chunks(_ bytes: [UInt8], size: Int) -> AsyncStream<ArraySlice<UInt8>> {
        AsyncStream { continuation in
            for start in stride(from: 0, to: bytes.count, by: size) {
                continuation.yield(bytes[start..<min(start + size, bytes.count)])
            }
            continuation.finish()
        }
    }

    @Test func hashesWhileWriting() async throws {
        let directory = NSTemporaryDirectory() + "writer-\(UUID().uuidString)"
        let writer = try BlobWriter(temporaryDirectory: directory)
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 / 7) }
        let staged = try await writer.stage(chunks(bytes, size: 65_536), maxBytes: 1_000_000)
        #expect(staged.size == 300_000)
        #expect(staged.digest == BlobWriter.digest(of: bytes))
        #expect(staged.head == Array(bytes.prefix(64)))
        #expect(FileManager.default.contents(atPath: staged.path) == Data(bytes))
    }

    @Test func stopsAtTheLimitAndLeavesNothing() async throws {
        let directory = NSTemporaryDirectory() + "writer-\(UUID().uuidString)"
        let writer = try BlobWriter(temporaryDirectory: directory)
        let bytes = [UInt8](repeating: 7, count: 1025)
        await #expect(throws: SpotError(.tooLarge, "the upload is larger than the limit of 1 KiB for this path")) {
            try await writer.stage(chunks(bytes, size: 100), maxBytes: 1024)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        let exact = try await writer.stage(chunks(Array(bytes.prefix(1024)), size: 100), maxBytes: 1024)
        #expect(exact.size == 1024)
    }
}

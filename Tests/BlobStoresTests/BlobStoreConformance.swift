import BlobStores
import Foundation
import SpotCore
import SpotService
import Testing

/// The contract of the `BlobStore` port, run against every implementation.
@Suite struct BlobStoreConformance {
    /// Each implementation under test, with a fresh temp directory for staging files.
    static func implementations() throws -> [(name: String, store: any BlobStore, scratch: String)] {
        let root = NSTemporaryDirectory() + "blobstore-\(UUID().uuidString)"
        return [("FileSystemBlobStore", try FileSystemBlobStore(root: root + "/blobs"), root)]
    }

    func stagedFile(_ bytes: [UInt8], in scratch: String) throws -> (String, Digest) {
        let path = scratch + "/staged-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, BlobWriter.digest(of: bytes))
    }

    @Test func storesAndReadsBack() async throws {
        for (name, store, scratch) in try Self.implementations() {
            let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let (file, digest) = try stagedFile(bytes, in: scratch)
            try await store.store(fileAt: file, as: digest)
            #expect(!FileManager.default.fileExists(atPath: file), "\(name): the staged file must be moved")
            #expect(try await store.size(of: digest) == 100_000, "\(name)")
            #expect(try await store.read(digest) == bytes, "\(name)")
            #expect(try await store.read(digest, offset: 99_990, count: 100) == Array(bytes[99_990...]), "\(name): short read at the end")
            #expect(try await store.read(digest, offset: 200_000, count: 10) == [], "\(name): nothing past the end")
        }
    }

    @Test func missingBlobsAreAbsentNotErrors() async throws {
        for (name, store, _) in try Self.implementations() {
            let digest = BlobWriter.digest(of: Array("never stored".utf8))
            #expect(try await store.size(of: digest) == nil, "\(name)")
            #expect(try await store.read(digest, offset: 0, count: 10) == nil, "\(name)")
            try await store.remove(digest)
        }
    }

    @Test func identicalBytesAreStoredOnceAndNeverOverwritten() async throws {
        for (name, store, scratch) in try Self.implementations() {
            let bytes = Array("same bytes".utf8)
            let (first, digest) = try stagedFile(bytes, in: scratch)
            try await store.store(fileAt: first, as: digest)
            // A second file claiming the same digest is dropped; the existing blob stays as it was.
            let (second, _) = try stagedFile(Array("other bytes".utf8), in: scratch)
            try await store.store(fileAt: second, as: digest)
            #expect(!FileManager.default.fileExists(atPath: second), "\(name): the duplicate's file is removed")
            try await store.store(bytes, as: digest)
            #expect(try await store.read(digest) == bytes, "\(name)")
        }
    }

    @Test func removesBlobs() async throws {
        for (name, store, _) in try Self.implementations() {
            let bytes = Array("thumbnail".utf8)
            let digest = BlobWriter.digest(of: bytes)
            try await store.store(bytes, as: digest)
            try await store.remove(digest)
            #expect(try await store.size(of: digest) == nil, "\(name)")
        }
    }

    @Test func fileSystemLayoutIsShardedByDigest() async throws {
        let root = NSTemporaryDirectory() + "blobstore-\(UUID().uuidString)"
        let store = try FileSystemBlobStore(root: root)
        let bytes = Array("layout".utf8)
        let digest = BlobWriter.digest(of: bytes)
        try await store.store(bytes, as: digest)
        let hex = digest.hex
        let expected = "\(root)/sha256/\(hex.prefix(2))/\(hex.dropFirst(2).prefix(2))/\(hex)"
        #expect(FileManager.default.contents(atPath: expected) == Data(bytes))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: (expected as NSString).deletingLastPathComponent)
        #expect(leftovers == [hex], "no temp files remain beside the blob")
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(root)/incoming").isEmpty, "nor in incoming/")
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
        await #expect(throws: SpotError.self) { try await writer.stage(chunks(bytes, size: 100), maxBytes: 1024) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        let exact = try await writer.stage(chunks(Array(bytes.prefix(1024)), size: 100), maxBytes: 1024)
        #expect(exact.size == 1024)
    }
}

import Foundation
import SpotCore
import SpotService
import Testing

/// The contract of the `BlobStore` port, written only against the port. A backend's tests
/// run each of `clauses` with a factory of empty stores.
public struct BlobStoreConformance: Sendable {
    /// A new, empty store, and a directory for staging files (on the store's file system
    /// when that matters).
    public typealias Factory = @Sendable () async throws -> (store: any BlobStore, scratch: String)

    let makeStore: Factory

    public init(makeStore: @escaping Factory) {
        self.makeStore = makeStore
    }

    /// One clause of the contract: a check run on a new store.
    public struct Clause: Sendable, CustomTestStringConvertible {
        public let name: String
        let body: @Sendable (BlobStoreConformance) async throws -> Void

        public var testDescription: String { name }

        /// Runs the check against the backend `conformance` makes.
        public func check(_ conformance: BlobStoreConformance) async throws {
            try await body(conformance)
        }
    }

    /// Every clause, for a backend's tests to run one by one (`@Test(arguments:)`), so a
    /// failing clause names itself and the backend.
    public static let clauses: [Clause] = [
        Clause(name: "storesAndReadsBack") { try await $0.storesAndReadsBack() },
        Clause(name: "streamsRanges") { try await $0.streamsRanges() },
        Clause(name: "missingBlobsAreAbsentNotErrors") { try await $0.missingBlobsAreAbsentNotErrors() },
        Clause(name: "identicalBytesAreStoredOnce") { try await $0.identicalBytesAreStoredOnce() },
        Clause(name: "removesBlobs") { try await $0.removesBlobs() },
        Clause(name: "enumeratesInPagesInDigestOrder") { try await $0.enumeratesInPagesInDigestOrder() },
        Clause(name: "aWorkingStoreIsHealthy") { try await $0.aWorkingStoreIsHealthy() },
    ]

    func staged(_ bytes: [UInt8], in scratch: String) throws -> (path: String, digest: Digest) {
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let path = scratch + "/staged-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, BlobWriter.digest(of: bytes))
    }

    func storesAndReadsBack() async throws {
        let (store, scratch) = try await makeStore()
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let (file, digest) = try staged(bytes, in: scratch)
        try await store.store(fileAt: file, as: digest)
        #expect(!FileManager.default.fileExists(atPath: file), "the staged file is gone once stored")
        #expect(try await store.size(of: digest) == 100_000)
        #expect(try await store.read(digest) == bytes)
        #expect(try await store.read(digest, offset: 99_990, count: 100) == Array(bytes[99_990...]), "a short read at the end")
        #expect(try await store.read(digest, offset: 200_000, count: 10) == [], "nothing past the end")
        let small = Array("thumbnail".utf8)
        try await store.store(small, as: BlobWriter.digest(of: small))
        #expect(try await store.read(BlobWriter.digest(of: small)) == small)
    }

    /// `stream(_:range:)` hands out exactly the range's bytes, fewer at the end of the blob,
    /// none past it or for an absent blob.
    func streamsRanges() async throws {
        let (store, scratch) = try await makeStore()
        let bytes = (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        let (file, digest) = try staged(bytes, in: scratch)
        try await store.store(fileAt: file, as: digest)
        func streamed(_ range: Range<Int64>, of digest: Digest = digest) async throws -> [UInt8]? {
            guard var stream = try await store.stream(digest, range: range) else { return nil }
            var received: [UInt8] = []
            while let chunk = try await stream.next() { received += chunk.readableBytesView }
            return received
        }
        #expect(try await streamed(0..<700_000) == bytes, "the whole blob, in more than one chunk where chunks are 256 KiB")
        #expect(try await streamed(300_001..<300_011) == Array(bytes[300_001..<300_011]), "a range inside")
        #expect(try await streamed(699_990..<800_000) == Array(bytes[699_990...]), "a range running past the end is cut short")
        #expect(try await streamed(800_000..<800_010) ?? [] == [], "nothing past the end")
        #expect(try await streamed(0..<10, of: BlobWriter.digest(of: [1, 2, 3])) ?? [] == [], "nothing of an absent blob")
        let small = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
        let smallDigest = BlobWriter.digest(of: small)
        try await store.store(small, as: smallDigest)
        #expect(try await streamed(0..<1000, of: smallDigest) == small, "a small blob whole")
        #expect(try await streamed(990..<2000, of: smallDigest) == Array(small[990...]), "a small blob's range cut short")
        #expect(try await streamed(1000..<1010, of: smallDigest) ?? [] == [], "nothing past a small blob's end")
    }

    /// `checkHealth()` returns on a store that works, empty or not.
    func aWorkingStoreIsHealthy() async throws {
        let (store, _) = try await makeStore()
        try await store.checkHealth()
        let bytes = Array("healthy".utf8)
        try await store.store(bytes, as: BlobWriter.digest(of: bytes))
        try await store.checkHealth()
    }

    func missingBlobsAreAbsentNotErrors() async throws {
        let (store, _) = try await makeStore()
        let digest = BlobWriter.digest(of: Array("never stored".utf8))
        #expect(try await store.size(of: digest) == nil)
        #expect(try await store.read(digest, offset: 0, count: 10) == nil)
        try await store.remove(digest)
        #expect(try await store.blobs(after: nil, limit: 10).isEmpty)
    }

    /// The same bytes stored twice (from a file, then from memory) are one blob holding them.
    func identicalBytesAreStoredOnce() async throws {
        let (store, scratch) = try await makeStore()
        let bytes = Array("same bytes".utf8)
        let (first, digest) = try staged(bytes, in: scratch)
        try await store.store(fileAt: first, as: digest)
        let (second, _) = try staged(bytes, in: scratch)
        try await store.store(fileAt: second, as: digest)
        #expect(!FileManager.default.fileExists(atPath: second), "the second file is gone too")
        try await store.store(bytes, as: digest)
        #expect(try await store.read(digest) == bytes)
        #expect(try await store.blobs(after: nil, limit: 10) == [StoredBlob(digest: digest, size: Int64(bytes.count))])
    }

    func removesBlobs() async throws {
        let (store, _) = try await makeStore()
        let bytes = Array("to remove".utf8)
        let digest = BlobWriter.digest(of: bytes)
        try await store.store(bytes, as: digest)
        try await store.remove(digest)
        #expect(try await store.size(of: digest) == nil)
        #expect(try await store.read(digest, offset: 0, count: 1) == nil)
        try await store.remove(digest)
    }

    /// Pages of `limit` in digest order, from after a digest, cover every blob once, small
    /// and large alike (a store may keep them apart).
    func enumeratesInPagesInDigestOrder() async throws {
        let (store, _) = try await makeStore()
        var expected: [StoredBlob] = []
        for index in 0..<23 {
            let bytes = Array("blob number \(index)".utf8) + [UInt8](repeating: 1, count: index % 3 == 0 ? 40_000 + index : index)
            let digest = BlobWriter.digest(of: bytes)
            try await store.store(bytes, as: digest)
            expected.append(StoredBlob(digest: digest, size: Int64(bytes.count)))
        }
        expected.sort { $0.digest < $1.digest }
        var walked: [StoredBlob] = []
        var after: Digest?
        while true {
            let page = try await store.blobs(after: after, limit: 5)
            #expect(page.count <= 5)
            walked += page
            guard let last = page.last else { break }
            after = last.digest
        }
        #expect(walked == expected)
        #expect(try await store.blobs(after: expected[10].digest, limit: 3) == Array(expected[11..<14]))
        var streamed: [StoredBlob] = []
        for try await blob in store.allBlobs(pageSize: 4) { streamed.append(blob) }
        #expect(streamed == expected)
    }
}

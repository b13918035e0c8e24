import Foundation
import NIOCore

/// Immutable bytes named by their SHA-256 digest: a plain key/value store that every
/// object store can be (put, get a range, size, delete, paged enumeration) and nothing a
/// file system alone can do.
///
/// Backends trust their input: hashing, the size limit and the digest check happen once,
/// above every backend (`SpotService.BlobWriter`). A blob is never modified in place;
/// storing a digest again leaves the store holding those bytes (a backend may keep an
/// existing copy only when it holds exactly the same bytes, so a damaged copy is healed).
/// gc safety does not come from here: the catalog's leases say which blobs an upload is
/// about to name. Removing a missing blob is not an error; reading a missing blob answers `nil`.
public protocol BlobStore: Sendable {
    /// Moves the fully written file at `path` into the store as `digest`. The file is
    /// gone afterwards. The blob is durable when this returns.
    func store(fileAt path: String, as digest: Digest) async throws

    /// Stores `bytes` as `digest` (for small blobs such as thumbnails); durable on return.
    func store(_ bytes: [UInt8], as digest: Digest) async throws

    /// The blob's size in bytes, or `nil` when absent.
    func size(of digest: Digest) async throws -> Int64?

    /// Up to `count` bytes from `offset`: fewer at the end of the blob, none past it.
    /// `nil` when the blob is absent.
    func read(_ digest: Digest, offset: Int64, count: Int) async throws -> [UInt8]?

    /// Removes the blob; a missing blob is not an error.
    func remove(_ digest: Digest) async throws

    /// Up to `limit` blobs with their sizes, in digest order, after `after` (from the first
    /// when `nil`); fewer (or none) at the end. Blobs stored or removed while a walk runs
    /// may or may not appear in it; none appears twice.
    func blobs(after: Digest?, limit: Int) async throws -> [StoredBlob]

    /// The whole blob, or `nil` when absent. Meant for small blobs (thumbnails).
    func read(_ digest: Digest) async throws -> [UInt8]?

    /// The bytes of `range` (within the blob) in chunks, read as they are consumed, for
    /// streaming to a client: where each read is a round trip, one request for the whole
    /// range. `nil` (or no chunks) when there is nothing to read: an absent blob, a range
    /// past its end; a blob shorter than `range` ends early.
    func stream(_ digest: Digest, range: Range<Int64>) async throws -> BlobByteStream?

    /// Returns when the store can be reached and used now (`/healthz?deep=1`): one cheap
    /// request or system call, tried once.
    /// - Throws: a `SpotError` saying what is wrong (no server, no bucket, no directory).
    func checkHealth() async throws
}

/// A blob store that keeps the blobs of up to `smallBlobLimit` bytes in the catalog's own
/// database: an upload of such bytes hands them to the catalog's commit
/// (`NewObject.smallBlob`), which stores them with the object in one transaction, so the
/// upload needs no lease and no write of its own for them.
public protocol CatalogKeptBlobs: BlobStore {
    /// The largest blob the catalog keeps.
    var smallBlobLimit: Int { get }
}

extension BlobStore {
    /// The size, then the bytes: two calls.
    public func read(_ digest: Digest) async throws -> [UInt8]? {
        guard let size = try await size(of: digest) else { return nil }
        return try await read(digest, offset: 0, count: Int(size))
    }

    /// `read(_:offset:count:)` after `read(_:offset:count:)` of 256 KiB each.
    public func stream(_ digest: Digest, range: Range<Int64>) async throws -> BlobByteStream? {
        ChunkedReads(blobs: self, digest: digest, offset: range.lowerBound, end: range.upperBound)
    }

    /// Every blob, in digest order, a page of `pageSize` fetched whenever the last is
    /// used up: the walk holds one page, however many blobs the store has.
    public func allBlobs(pageSize: Int = 1000) -> BlobWalk {
        BlobWalk(blobs: self, pageSize: pageSize)
    }

    /// How many blobs the store holds and their bytes, counted by one walk.
    public func tally() async throws -> BlobTally {
        var tally = BlobTally()
        for try await blob in allBlobs() { tally.add(blob) }
        return tally
    }
}

/// A count of blobs and their bytes.
public struct BlobTally: Sendable, Equatable {
    public var count = 0
    public var bytes: Int64 = 0

    public init() {}

    /// Counts `blob`.
    public mutating func add(_ blob: StoredBlob) {
        count += 1
        bytes += blob.size
    }
}

/// Every blob of a store in digest order (`BlobStore.allBlobs(pageSize:)`).
public struct BlobWalk: AsyncSequence, Sendable {
    let blobs: any BlobStore
    let pageSize: Int

    public func makeAsyncIterator() -> Iterator {
        Iterator(blobs: blobs, pageSize: pageSize)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let blobs: any BlobStore
        let pageSize: Int
        private var page: ArraySlice<StoredBlob> = []
        private var after: Digest?
        private var ended = false

        init(blobs: any BlobStore, pageSize: Int) {
            self.blobs = blobs
            self.pageSize = pageSize
        }

        public mutating func next() async throws -> StoredBlob? {
            if page.isEmpty, !ended {
                let fetched = try await blobs.blobs(after: after, limit: pageSize)
                ended = fetched.count < pageSize
                after = fetched.last?.digest
                page = fetched[...]
            }
            return page.popFirst()
        }
    }
}

/// A blob's bytes as `BlobStore.stream(_:range:)` hands them out.
public typealias BlobByteStream = any AsyncIteratorProtocol<ByteBuffer, any Error> & Sendable

/// Bytes already in memory (a blob's range), handed out as one chunk.
package struct BytesInMemory: AsyncIteratorProtocol, Sendable {
    private var bytes: ByteBuffer?

    package init(_ bytes: some Sequence<UInt8>) {
        self.bytes = ByteBuffer(bytes: bytes)
    }

    package mutating func next() async throws -> ByteBuffer? {
        defer { bytes = nil }
        return bytes
    }
}

/// A range read in chunks of 256 KiB, each one `read(_:offset:count:)`.
struct ChunkedReads<Store: BlobStore>: AsyncIteratorProtocol, Sendable {
    let blobs: Store
    let digest: Digest
    var offset: Int64
    let end: Int64

    mutating func next() async throws -> ByteBuffer? {
        guard offset < end else { return nil }
        let count = Int(Swift.min(end - offset, 256 * 1024))
        guard let bytes = try await blobs.read(digest, offset: offset, count: count), !bytes.isEmpty else { return nil }
        offset += Int64(bytes.count)
        return ByteBuffer(bytes: bytes)
    }
}

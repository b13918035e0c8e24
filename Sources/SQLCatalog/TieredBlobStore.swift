#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SpotCore

/// Blobs in two tiers: those of at most `smallBlobLimit` bytes as rows of the catalog's
/// database (table `small_blobs`), larger ones in `large` (files or S3).
///
/// Storing a small blob is then one row in a write transaction, which shares its sync with
/// the catalog's other writes (group commit on SQLite; PostgreSQL's commits likewise), in
/// place of a file of its own with three syncs or a request to S3. A small blob that
/// `large` holds (stored before the tiers, or by hand) is read, listed and removed there too.
public struct TieredBlobStore<Database: CatalogDatabase>: CatalogKeptBlobs {
    /// Where the small blobs' rows are.
    public let database: Database
    /// Where the larger blobs are.
    public let large: any BlobStore

    /// The largest blob kept in the database: tiny files and most 256-pixel thumbnails.
    public static var smallBlobLimit: Int { 16 * 1024 }

    public var smallBlobLimit: Int { Self.smallBlobLimit }

    public init(database: Database, large: any BlobStore) {
        self.database = database
        self.large = large
    }

    public func store(fileAt path: String, as digest: Digest) async throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SpotError.fromErrno("cannot read \(path)") }
        guard info.st_size <= Self.smallBlobLimit else { return try await large.store(fileAt: path, as: digest) }
        try await store([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), as: digest)
        unlink(path)
    }

    public func store(_ bytes: [UInt8], as digest: Digest) async throws {
        guard bytes.count <= Self.smallBlobLimit else { return try await large.store(bytes, as: digest) }
        try await database.write { transaction in try await Self.insert(bytes, as: digest, transaction) }
    }

    public func size(of digest: Digest) async throws -> Int64? {
        if let size = try await database.query("SELECT length(bytes) FROM small_blobs WHERE digest = \(digest.hex)").first {
            return try size(0)
        }
        return try await large.size(of: digest)
    }

    public func read(_ digest: Digest, offset: Int64, count: Int) async throws -> [UInt8]? {
        guard let bytes = try await smallBytes(of: digest) else { return try await large.read(digest, offset: offset, count: count) }
        return Array(Self.slice(bytes, offset, count))
    }

    public func stream(_ digest: Digest, range: Range<Int64>) async throws -> BlobByteStream? {
        guard let bytes = try await smallBytes(of: digest) else { return try await large.stream(digest, range: range) }
        return BytesInMemory(Self.slice(bytes, range.lowerBound, Int(clamping: range.count)))
    }

    public func remove(_ digest: Digest) async throws {
        try await database.write { transaction in try await transaction.run("DELETE FROM small_blobs WHERE digest = \(digest.hex)") }
        try await large.remove(digest)
    }

    /// A page of each tier, merged: the first `limit` of the merge are the first `limit` of
    /// both tiers together; a blob in both is listed once.
    public func blobs(after: Digest?, limit: Int) async throws -> [StoredBlob] {
        let small = try await database.query("""
            SELECT digest, length(bytes) FROM small_blobs WHERE digest > \(after?.hex ?? "") ORDER BY digest LIMIT \(limit)
            """).map { StoredBlob(digest: try storedDigest(try $0(0)), size: try $0(1)) }
        let larger = try await large.blobs(after: after, limit: limit)
        var merged: [StoredBlob] = []
        var (left, right) = (small[...], larger[...])
        while merged.count < limit, let next = [left.first, right.first].compactMap({ $0 }).min(by: { $0.digest < $1.digest }) {
            if left.first?.digest == next.digest { left.removeFirst() }
            if right.first?.digest == next.digest { right.removeFirst() }
            merged.append(next)
        }
        return merged
    }

    /// The large tier's health: the database is the catalog's, whose own check it is.
    public func checkHealth() async throws {
        try await large.checkHealth()
    }

    /// Stores `bytes` as small blob `digest` in `transaction`: a row that holds other bytes
    /// (damaged) gets these, as a file would be written again.
    static func insert(_ bytes: [UInt8], as digest: Digest, _ transaction: any CatalogTransaction) async throws {
        try await transaction.run("""
            INSERT INTO small_blobs (digest, bytes) VALUES (\(digest.hex), \(bytes))
            ON CONFLICT (digest) DO UPDATE SET bytes = excluded.bytes WHERE small_blobs.bytes <> excluded.bytes
            """)
    }

    /// The bytes of small blob `digest`, or `nil` when the database has no row for it.
    private func smallBytes(of digest: Digest) async throws -> [UInt8]? {
        guard let row = try await database.query("SELECT bytes FROM small_blobs WHERE digest = \(digest.hex)").first else { return nil }
        return try row(0)
    }

    /// Up to `count` of `bytes` from `offset`: fewer at the end, none past it.
    private static func slice(_ bytes: [UInt8], _ offset: Int64, _ count: Int) -> ArraySlice<UInt8> {
        let start = Int(min(max(offset, 0), Int64(bytes.count)))
        return bytes[start..<(start + min(bytes.count - start, max(0, count)))]
    }
}

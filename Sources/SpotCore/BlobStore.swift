/// Immutable bytes named by their SHA-256 digest.
///
/// Backends trust their input: hashing, the size limit and the digest check happen once,
/// above every backend (`SpotService.BlobWriter`). A blob is never modified in place.
/// Storing a digest that already exists keeps the existing blob; removing a missing blob
/// is not an error; reading a missing blob answers `nil`.
public protocol BlobStore: Sendable {
    /// Moves the fully written file at `path` into the store as `digest`. The file is
    /// gone afterwards, whether it was moved or dropped because the blob already existed.
    /// The blob is durable (fsynced) when this returns.
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
}

extension BlobStore {
    /// The whole blob, or `nil` when absent. Meant for small blobs (thumbnails).
    public func read(_ digest: Digest) async throws -> [UInt8]? {
        guard let size = try await size(of: digest) else { return nil }
        return try await read(digest, offset: 0, count: Int(size))
    }
}

import Foundation

/// Immutable bytes named by their SHA-256 digest.
///
/// Backends trust their input: hashing, the size limit and the digest check happen once,
/// above every backend (`SpotService.BlobWriter`). A blob is never modified in place.
/// Storing a digest that already exists keeps the existing blob when it holds exactly the
/// new bytes (a blob cut short or with flipped bits on disk is replaced by the new copy, so
/// an upload's good bytes are never dropped for damaged ones) and refreshes its modification
/// time, so that `gc`'s grace period covers the catalog commit that follows
/// (`remove(_:ifModifiedBefore:)` never removes a blob between a store finding it and
/// refreshing its time). Removing a missing blob is not an error; reading a missing blob
/// answers `nil`.
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

    // MARK: Maintenance (fsck, gc, stats)

    /// Every blob with its size and modification time. Files that are not blobs (writes in
    /// progress, strays) are listed apart and never as blobs. Blobs written while the
    /// listing runs may or may not be in it.
    func inventory() async throws -> BlobInventory

    /// Removes what writes cut short by a crash left behind and returns how many files that
    /// was. Only safe when nothing else is writing to the store.
    func removeInterruptedWrites() throws -> Int

    /// Where the blob `digest` lives (or would), for messages to operators.
    func location(of digest: Digest) -> String

    /// Moves blob `digest` out of the store into a quarantine area, never deleting it, and
    /// returns where it went; `nil` when the blob is absent. Quarantining the same digest
    /// again keeps both files.
    func quarantine(_ digest: Digest) async throws -> String?

    /// Removes blob `digest` only if it was last modified before `cutoff` (checked and
    /// removed as one step with respect to stores refreshing it, also from other processes);
    /// returns whether it was removed. A missing blob answers `false`.
    func remove(_ digest: Digest, ifModifiedBefore cutoff: Date) async throws -> Bool
}

extension BlobStore {
    /// The whole blob, or `nil` when absent. Meant for small blobs (thumbnails).
    public func read(_ digest: Digest) async throws -> [UInt8]? {
        guard let size = try await size(of: digest) else { return nil }
        return try await read(digest, offset: 0, count: Int(size))
    }
}

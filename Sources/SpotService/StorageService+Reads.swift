import Access
import Foundation
import NIOCore
import SpotCore

extension StorageService {
    /// The object at `path`, if `user` may get it; without its position when its spot hides it from `user`.
    public func object(at path: ObjectPath, for user: User?) async throws -> StoredObject {
        let (object, spot, _) = try await readableObject(at: path, for: user)
        return Self.seesPosition(of: spot, user) ? object : object.withoutPosition()
    }

    /// The thumbnail of the object at `path` with long edge `size`, in WebP when `webP`, else
    /// in the standard format; `.internal` ("damaged: …") when `fsck --repair` marked its
    /// blob damaged.
    public func thumbnail(of path: ObjectPath, size: Int, webP: Bool = false, for user: User?) async throws -> Thumbnail {
        let (object, _, damage) = try await readableObject(at: path, for: user)
        return try Self.thumbnail(of: object, size: size, webP: webP, damage: damage)
    }

    /// The thumbnail of `object` with long edge `size` (see `thumbnail(of:size:webP:for:)`),
    /// given the damage marks of its blobs.
    static func thumbnail(of object: StoredObject, size: Int, webP: Bool, damage: [SpotCore.Digest: String]) throws -> Thumbnail {
        let path = object.path
        guard let thumbnail = object.thumbnails.first(where: { $0.size == size && $0.isWebP == webP }) else {
            let sizes = object.thumbnails.filter { $0.isWebP == webP }.map { String($0.size) }
            let kind = webP ? "WebP thumbnail" : "thumbnail"
            throw SpotError(.notFound, sizes.isEmpty
                ? object.thumbnails.isEmpty
                    ? "\(path) has no thumbnails (only images in image buckets get them)"
                    : "\(path) has no WebP thumbnails: they were not made when it was stored; upload it again to make them"
                : "\(path) has no \(size) px \(kind); sizes: \(sizes.joined(separator: ", "))")
        }
        if let reason = damage[thumbnail.digest] {
            throw Self.damaged(thumbnail.digest, of: "the \(size) px \(webP ? "WebP " : "")thumbnail of \(path)", reason: reason)
        }
        return thumbnail
    }

    /// The bytes of the object at `path` as `user` may see them (see `download(of:spot:for:)`).
    public func download(at path: ObjectPath, for user: User?) async throws -> Download {
        let (object, spot, damage) = try await readableObject(at: path, for: user)
        return try await download(of: object, spot: spot, for: user, damage: damage)
    }

    /// The bytes of blob `digest` in `range`, in chunks, read as the consumer asks.
    public func contents(of digest: Digest, range: Range<Int64>) -> BlobChunks {
        BlobChunks(blobs: blobs, digest: digest, range: range)
    }

    /// Deletes the object at `path` if `user` may, and returns it.
    public func delete(_ path: ObjectPath, by user: User?) async throws -> StoredObject {
        _ = try await authorizedObject(.delete, at: path, for: user)
        guard let removed = try await catalog.removeObject(at: path) else {
            throw SpotError(.notFound, "there is no object \(path)")
        }
        return removed
    }

    /// One page of a listing, if `user` may list `query.prefix`; objects in spots that hide
    /// their position from `user` come without it.
    public func list(_ query: ListQuery, for user: User?) async throws -> Listing {
        try authorizeListing(bucket: query.bucket, prefix: query.prefix, for: user)
        var listing = try await catalog.list(query)
        var hidden: [String: Bool] = [:]
        for (index, item) in listing.items.enumerated() where item.photo?.location != nil {
            guard let spotID = item.path.topFolder else { continue }
            if hidden[spotID] == nil {
                hidden[spotID] = !Self.seesPosition(of: try await catalog.spot(bucket: query.bucket, id: spotID), user)
            }
            if hidden[spotID] == true { listing.items[index] = item.withoutPosition() }
        }
        return listing
    }
}

/// A blob's bytes in a range, in chunks read as they are consumed (one request for the
/// range where the blob store is remote); a blob missing or shorter than the catalog says
/// fails the read that finds it.
public struct BlobChunks: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer
    let blobs: any BlobStore
    let digest: Digest
    let range: Range<Int64>

    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let blobs: any BlobStore
        let digest: Digest
        let range: Range<Int64>
        var stream: BlobByteStream?  // opened by the first `next()`
        var received: Int64 = 0

        public mutating func next() async throws -> ByteBuffer? {
            guard received < range.count else { return nil }
            if stream == nil { stream = try await blobs.stream(digest, range: range) }
            guard let chunk = try await stream?.next(), chunk.readableBytes > 0 else {
                throw SpotError(.internal, "blob \(digest) is missing or shorter than the catalog says; run `spotstore fsck`")
            }
            received += Int64(chunk.readableBytes)
            return chunk
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(blobs: blobs, digest: digest, range: range)
    }
}

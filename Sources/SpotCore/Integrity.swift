import Foundation

/// A blob as the blob store holds it, for `fsck`, `gc` and `stats`.
public struct StoredBlob: Sendable, Hashable {
    public var digest: Digest
    /// The blob's size in bytes (what the store holds, whatever the catalog says).
    public var size: Int64

    public init(digest: Digest, size: Int64) {
        self.digest = digest
        self.size = size
    }
}

/// Every blob the catalog refers to, and the blobs marked damaged.
public struct BlobReferences: Sendable {
    /// An object's original bytes.
    public struct Object: Sendable, Hashable {
        public var path: String
        public var digest: Digest
        public var size: Int64
        public init(path: String, digest: Digest, size: Int64) {
            self.path = path
            self.digest = digest
            self.size = size
        }
    }

    /// A thumbnail of the blob `original`, kept per blob digest (also after its objects are gone).
    public struct Thumbnail: Sendable, Hashable {
        public var original: Digest
        /// The long edge in pixels.
        public var edge: Int
        public var digest: Digest
        public var byteCount: Int64
        public init(original: Digest, edge: Int, digest: Digest, byteCount: Int64) {
            self.original = original
            self.edge = edge
            self.digest = digest
            self.byteCount = byteCount
        }
    }

    /// A copy of `original` without GPS.
    public struct LocationFree: Sendable, Hashable {
        public var original: Digest
        public var digest: Digest
        public init(original: Digest, digest: Digest) {
            self.original = original
            self.digest = digest
        }
    }

    public var objects: [Object]
    public var thumbnails: [Thumbnail]
    public var locationFree: [LocationFree]
    /// Blobs `fsck --repair` found corrupt or missing, with why ("failed its checksum", "is missing").
    public var damaged: [Digest: String]
    /// Blobs leased by uploads not yet committed, with the latest expiry of their leases.
    public var leases: [Digest: Date]
    /// Chunks of upload sessions in progress.
    public var uploadChunks: Set<Digest>

    public init(
        objects: [Object] = [], thumbnails: [Thumbnail] = [], locationFree: [LocationFree] = [], damaged: [Digest: String] = [:],
        leases: [Digest: Date] = [:], uploadChunks: Set<Digest> = []
    ) {
        self.leases = leases
        self.uploadChunks = uploadChunks
        self.objects = objects
        self.thumbnails = thumbnails
        self.locationFree = locationFree
        self.damaged = damaged
    }

    /// Every digest referenced by an object, a thumbnail, a GPS-free copy or an upload
    /// session's chunk: what `gc` keeps.
    public var referenced: Set<Digest> {
        Set(objects.map(\.digest)).union(thumbnails.map(\.digest)).union(locationFree.map(\.digest)).union(uploadChunks)
    }
}

/// A problem in the catalog's own references (not in blob bytes), as `fsck` reports it.
public struct CatalogIssue: Sendable, Hashable {
    /// What is wrong, naming the rows.
    public var problem: String
    /// What an operator should do.
    public var remedy: String
    /// Whether `Catalog.repairIssues()` fixes it.
    public var repairable: Bool

    public init(problem: String, remedy: String, repairable: Bool) {
        self.problem = problem
        self.remedy = remedy
        self.repairable = repairable
    }
}

/// What the catalog holds, counted for `stats`.
public struct CatalogStatistics: Sendable, Equatable, Codable {
    /// Objects and the sum of their sizes in one bucket.
    public struct Bucket: Sendable, Equatable, Codable {
        public var name: String
        public var objects: Int
        public var bytes: Int64
        public init(name: String, objects: Int, bytes: Int64) {
            self.name = name
            self.objects = objects
            self.bytes = bytes
        }
    }

    public var objects: Int
    /// The sum of object sizes (what users stored).
    public var logicalBytes: Int64
    /// Distinct original blobs objects refer to.
    public var uniqueOriginals: Int
    /// The sum of the sizes of distinct original blobs.
    public var uniqueOriginalBytes: Int64
    /// Distinct thumbnail blobs and the sum of their sizes.
    public var thumbnails: Int
    public var thumbnailBytes: Int64
    /// By bucket name.
    public var buckets: [Bucket]
    /// Objects whose owner's user was deleted (they stay, as does their spot's ownership).
    public var objectsOfDeletedUsers: Int

    public init(
        objects: Int, logicalBytes: Int64, uniqueOriginals: Int, uniqueOriginalBytes: Int64, thumbnails: Int, thumbnailBytes: Int64,
        buckets: [Bucket], objectsOfDeletedUsers: Int = 0
    ) {
        self.objects = objects
        self.logicalBytes = logicalBytes
        self.uniqueOriginals = uniqueOriginals
        self.uniqueOriginalBytes = uniqueOriginalBytes
        self.thumbnails = thumbnails
        self.thumbnailBytes = thumbnailBytes
        self.buckets = buckets
        self.objectsOfDeletedUsers = objectsOfDeletedUsers
    }
}

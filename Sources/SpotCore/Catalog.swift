import Foundation

/// The metadata of the store, every port in one: what the storage service, the server and
/// the command line hold. Each port is written once for every database (`SQLCatalog`).
public protocol Catalog: UserCatalog, ObjectCatalog, SharingCatalog, BrowserCatalog, UploadSessionCatalog, BlobLedger, IntegrityCatalog {
    /// Tells this process when any process has committed, so that what it keeps is dropped.
    var changes: any CatalogChangeFeed { get }

    /// Returns when the catalog answers a trivial query now (`/healthz?deep=1`); cheap, and
    /// as quick to fail as the backend allows.
    /// - Throws: `SpotError(.unavailable)` saying what is wrong (no server, no connection).
    func checkHealth() async throws
}

/// An object with what deciding on a read of it needs: `Catalog.objectForReading(at:)`.
public struct ObjectReading: Sendable {
    /// The object, or `nil` when absent.
    public var object: StoredObject?
    /// The spot of the object's path (its top folder), or `nil`.
    public var spot: SpotState?
    /// Why blobs of the object (its bytes, its thumbnails) are marked damaged, by digest;
    /// empty when none is.
    public var damage: [Digest: String]

    public init(object: StoredObject?, spot: SpotState?, damage: [Digest: String] = [:]) {
        self.object = object
        self.spot = spot
        self.damage = damage
    }
}

/// A lease on blobs, from `Catalog.lease(_:at:for:)`.
public struct LeaseID: Sendable, Hashable {
    public let rawValue: Int64
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
}

/// How long (seconds) a removal claim of a gc that died keeps uploads of that digest waiting.
public let claimLifetime: Double = 60

/// The change-notification port: tells a process that any process may have committed to
/// the catalog, so that whatever it keeps from the catalog (memoized reads, kept answers,
/// users and claims) is dropped. Every cache listens here and nowhere else.
public protocol CatalogChangeFeed: Sendable {
    /// A number that changes after every commit by any connection or process (at most
    /// `stalenessBound` after it) and never comes back, so an answer worked out after
    /// reading it holds while it stays the same; `nil` when the feed cannot tell (keep nothing).
    func stamp() throws -> Int64?

    /// How long after another process's commit `stamp()` may still give the old number:
    /// zero for SQLite (the WAL index is shared memory).
    var stalenessBound: Duration { get }
}


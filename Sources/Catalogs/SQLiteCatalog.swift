import Foundation
import GRDB
import CatalogPlanning
import SpotCore

/// The embedded catalog: SQLite through GRDB, in one file that several processes may share.
///
/// A file catalog is a `DatabasePool` in WAL mode, so readers never wait for the writer.
/// Every write is one IMMEDIATE transaction; a writer that finds another connection or
/// process holding the write lock waits up to `busyTimeout` before failing, which is how
/// limits hold across processes. Foreign keys are enforced. The schema is migrated when
/// the catalog is opened; shipped migrations never change.
public struct SQLiteCatalog: Catalog {
    /// How long a write waits for the write lock held by another connection or process.
    static let busyTimeout: TimeInterval = 10

    /// Access to the database.
    let dbWriter: any DatabaseWriter
    /// Keeps the answers of the reads every download makes while the file is unchanged
    /// (none for a catalog in memory).
    let memo: CatalogReadMemo?
    public let changes: any CatalogChangeFeed

    /// Wraps `dbWriter` and migrates its schema to the latest version; `changes` is the
    /// file's feed, `nil` for a catalog in memory (nothing is kept then).
    ///
    /// - important: Create `dbWriter` with `makeConfiguration()`.
    init(_ dbWriter: any DatabaseWriter, changes: SQLiteChangeFeed? = nil) throws {
        self.dbWriter = dbWriter
        self.changes = changes ?? NoChangeFeed()
        self.memo = changes.map { CatalogReadMemo(feed: $0) }
        do {
            try Self.migrator.migrate(dbWriter)
        } catch {
            // Another process may have applied the same migration between GRDB's check of
            // the applied migrations and its migration transaction: then all is well.
            guard try dbWriter.read(Self.migrator.hasCompletedMigrations) else { throw error }
        }
    }

    /// Opens the catalog file at `path` in WAL mode, creating the file (not its folder) when missing.
    ///
    /// Several processes may open the same file at once. Throws when the folder is missing,
    /// the file is not an SQLite database, or it was migrated by a newer SpotStore.
    public init(path: String) throws {
        let pool = try DatabasePool(path: path, configuration: Self.makeConfiguration())
        try self.init(pool, changes: SQLiteChangeFeed(path: path))
    }

    /// A new, empty catalog in memory, for tests; it is gone when the last copy of the value is.
    public static func inMemory() throws -> SQLiteCatalog {
        try SQLiteCatalog(DatabaseQueue(configuration: makeConfiguration()))
    }

    /// Runs `updates` in one write transaction.
    /// - Throws: `SpotError(.insufficientStorage)` when the disk is too full for SQLite to
    ///   commit (nothing of the transaction is kept); any other error of `updates` or SQLite.
    func write<T: Sendable>(_ updates: @Sendable @escaping (Database) throws -> T) async throws -> T {
        do {
            return try await dbWriter.write(updates)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
            throw SpotError(.insufficientStorage, "the catalog cannot grow: the store's disk is full; free space and retry")
        }
    }

    /// Runs `body` in a read transaction on the calling thread. Every read of the catalog
    /// goes through here: most are the short indexed lookups every request makes (token,
    /// object, spot), for which a hop to a reader's dispatch queue and back costs more
    /// than the query. It waits only while every reader of the pool is busy, and in WAL
    /// mode readers never wait for the writer.
    ///
    /// - important: Do not mix in GRDB's `async` reads: they keep a reader until their task
    ///   resumes on the cooperative pool, so cooperative threads blocked here waiting for a
    ///   reader would deadlock with them.
    func readNow<T>(_ body: (Database) throws -> T) throws -> T {
        try dbWriter.read(body)
    }

    /// Reads the schema's first page.
    public func checkHealth() throws {
        _ = try readNow { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_master") }
    }

    /// The connection settings every catalog connection uses.
    static func makeConfiguration() -> Configuration {
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(busyTimeout)
        return config
    }
}

/// The feed of a catalog only this process uses (in memory): no stamp, so nothing is kept.
struct NoChangeFeed: CatalogChangeFeed {
    func stamp() throws -> Int64? { nil }
    var stalenessBound: Duration { .zero }
}

import Foundation
import SpotCore

/// The catalog, written once for every database: each operation is one transaction script
/// over a `CatalogDatabase` (SQLite or PostgreSQL), whose tables and columns are spelled
/// alike. The limits of spots and upload sessions hold across processes and machines
/// because every check is made in the same transaction that writes, under the locks it
/// names (`CatalogTransaction.lock`, `CatalogSQL.forUpdate`).
///
/// Reads every download makes (a token's user, an object with its spot and damage) are
/// kept while the database's change feed says nothing was committed (`CatalogReadMemo`).
public struct SQLCatalog<Database: CatalogDatabase>: Catalog {
    /// The database the scripts run on.
    public let database: Database
    /// Keeps the answers of the reads every download makes.
    let memo: CatalogReadMemo
    /// The time a write records (creation, update, sign-out, damage marks).
    let clock: @Sendable () -> Date

    /// The catalog on `database`, stamping writes with `clock`'s time.
    public init(_ database: Database, clock: @escaping @Sendable () -> Date = Date.init) {
        self.database = database
        self.memo = CatalogReadMemo(feed: database.changes)
        self.clock = clock
    }

    public var changes: any CatalogChangeFeed { database.changes }

    public func checkHealth() async throws {
        try await database.checkHealth()
    }

    /// Runs `body` in one write transaction of the database.
    func write<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T {
        try await database.write(body)
    }

    /// Runs `body`, whose statements need not see one snapshot (`CatalogDatabase.readCommitted`).
    func readCommitted<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T {
        try await database.readCommitted(body)
    }

    /// Runs `body` in one read-only snapshot of the database.
    func read<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T {
        try await database.read(body)
    }
}

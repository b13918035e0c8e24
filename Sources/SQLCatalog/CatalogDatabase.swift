import SpotCore

/// The seam between the catalog's one transaction logic (`SQLCatalog`) and a database:
/// SQLite (the embedded store) or PostgreSQL (several servers). Both keep the same tables
/// and columns, spelled alike, so the logic's CatalogSQL runs unchanged on either.
///
/// Errors: a database that is busy past its timeout, unreachable or gone throws
/// `SpotError(.unavailable)` (503 with Retry-After); a full disk `.insufficientStorage`; a
/// violated constraint `.conflict`; a `SpotError` thrown by the body passes as it is.
public protocol CatalogDatabase: Sendable {
    /// The SQL this database speaks.
    var dialect: SQLDialect { get }

    /// Tells this process when any process has committed (see `CatalogChangeFeed`).
    var changes: any CatalogChangeFeed { get }

    /// Runs `body` in one write transaction: all of it is kept, or none. Writers of every
    /// process take turns where `body` takes locks (`CatalogTransaction.lock`) or row locks
    /// (`CatalogSQL.forUpdate`); SQLite's write transactions take turns as a whole. A transaction
    /// that lost a deadlock or serialization race is run again.
    func write<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T

    /// Runs the one statement `sql` on its own (a snapshot of its own, no transaction around
    /// it: one round trip) and returns its rows.
    func query(_ sql: CatalogSQL) async throws -> [SQLRow]

    /// Runs `body` in one read-only snapshot.
    func read<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T

    /// Runs `body`, whose statements need not see one snapshot (each sees what was committed
    /// when it ran), the cheapest way this database has: PostgreSQL runs each statement on its
    /// own, one round trip with no BEGIN and COMMIT; SQLite in one read transaction, which
    /// costs less there than one per statement.
    func readCommitted<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T

    /// Returns when the database answers a trivial query now; see `Catalog.checkHealth`.
    func checkHealth() async throws
}

/// One transaction of a `CatalogDatabase`, lent to a body for as long as it runs.
public protocol CatalogTransaction: Sendable {
    /// Runs `sql` and returns the rows it gave (none for most writes).
    nonisolated(nonsending) func rows(_ sql: CatalogSQL) async throws -> [SQLRow]

    /// Takes the named locks until the transaction ends, in key order (so two transactions
    /// never wait for each other in a cycle): PostgreSQL's advisory locks; nothing in
    /// SQLite, whose write transactions take turns as a whole.
    nonisolated(nonsending) func lock(_ keys: [String]) async throws
}

extension CatalogTransaction {
    /// Runs `sql` for its effect.
    nonisolated(nonsending) public func run(_ sql: CatalogSQL) async throws {
        _ = try await rows(sql)
    }

    /// The first row `sql` gives, or `nil`.
    nonisolated(nonsending) public func row(_ sql: CatalogSQL) async throws -> SQLRow? {
        try await rows(sql).first
    }

    /// The first column of the first row `sql` gives, or `nil` without a row.
    nonisolated(nonsending) public func value<T: SQLDecodable>(_ sql: CatalogSQL, as _: T.Type = T.self) async throws -> T? {
        guard let row = try await row(sql) else { return nil }
        return try row(0) as T
    }
}

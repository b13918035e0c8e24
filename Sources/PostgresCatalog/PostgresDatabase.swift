import Foundation
import Logging
import Metrics
import PostgresNIO
import SQLCatalog
import SpotCore
import Synchronization

/// The catalog of several servers: `SQLCatalog` on PostgreSQL, one database that any
/// number of `spotstore serve` processes share.
public typealias PostgresCatalog = SQLCatalog<PostgresDatabase>

extension SQLCatalog where Database == PostgresDatabase {
    /// Connects to the database `url` names; see `PostgresDatabase.connect(url:logger:connectionWait:)`.
    public static func connect(url: String, logger: Logger) async throws -> PostgresCatalog {
        PostgresCatalog(try await PostgresDatabase.connect(url: url, logger: logger))
    }

    /// `connect(url:logger:)` with how long an operation waits for a connection.
    package static func connect(url: String, logger: Logger, connectionWait: Duration) async throws -> PostgresCatalog {
        PostgresCatalog(try await PostgresDatabase.connect(url: url, logger: logger, connectionWait: connectionWait))
    }

    /// Stops the database's listener and pool; operations fail afterwards.
    public func close() async {
        await database.close()
    }
}

/// PostgreSQL through postgres-nio, as a `CatalogDatabase`.
///
/// One `PostgresClient` (its pool) runs every query. Every write is one READ COMMITTED
/// transaction that takes the locks its invariant needs (advisory locks through
/// `CatalogTransaction.lock`, row locks through `CatalogSQL.forUpdate`), sends `NOTIFY
/// spotstore_changes` and commits; one that deadlocks or fails to serialize with another is
/// retried. Reads run in one REPEATABLE READ snapshot. Ordered text (buckets, names, spot
/// ids, uids, digests) uses `COLLATE "C"`, so order is byte order, as listings and page
/// tokens need. The schema is migrated by `connect`.
public final class PostgresDatabase: CatalogDatabase {
    /// How long an operation waits for a connection of the pool before it fails: the pool
    /// itself would keep a request waiting for a minute while the server is down.
    static let defaultConnectionWait: Duration = .seconds(10)
    /// How long an operation waits for a connection while the change listener has none.
    static let outageWait: Duration = .seconds(1)
    /// Attempts of a write that deadlocked or failed to serialize with another.
    static let writeAttempts = 5

    let client: PostgresClient
    let url: PostgresURL
    let logger: Logger
    let connectionWait: Duration
    let feed: PostgresChangeFeed
    /// The pool's and the listener's run loops, cancelled by `close()`.
    private let running: Task<Void, Never>

    /// The LISTEN/NOTIFY feed (`PostgresChangeFeed`): a stamp at most 1 s old, or none.
    public var changes: any CatalogChangeFeed { feed }

    public var dialect: SQLDialect { .postgres }

    private init(client: PostgresClient, url: PostgresURL, logger: Logger, connectionWait: Duration, feed: PostgresChangeFeed, running: Task<Void, Never>) {
        self.client = client
        self.url = url
        self.logger = logger
        self.connectionWait = connectionWait
        self.feed = feed
        self.running = running
    }

    /// Connects to the database `url` names (see `PostgresURL`), migrates its schema, and
    /// starts the pool and the change listener; `close()` stops them.
    ///
    /// Several servers may start at once: migrations run under an advisory lock.
    /// - Throws: `SpotError` with one line saying what is wrong and what to do: a malformed
    ///   URL, a server that cannot be reached, a wrong user or password, a missing database,
    ///   or a schema from a newer SpotStore.
    public static func connect(url: String, logger: Logger) async throws -> PostgresDatabase {
        try await connect(url: url, logger: logger, connectionWait: defaultConnectionWait)
    }

    /// `connect(url:logger:)` with how long an operation waits for a connection.
    package static func connect(url text: String, logger: Logger, connectionWait: Duration) async throws -> PostgresDatabase {
        let url = try PostgresURL(text)
        // One connection of its own first: the pool would retry a refused connection for a
        // minute instead of saying why.
        let connection = try await openConnection(to: url, logger: logger)
        do {
            try await migrate(connection, logger: logger)
        } catch {
            try? await connection.close()
            throw translated(error, url: url)
        }
        try? await connection.close()

        let client = PostgresClient(configuration: url.clientConfiguration(), backgroundLogger: logger)
        let feed = PostgresChangeFeed()
        let (firstAttempt, reportFirstAttempt) = AsyncStream.makeStream(of: (any Error)?.self)
        let running = Task {
            await withDiscardingTaskGroup { group in
                group.addTask { await client.run() }
                group.addTask {
                    await feed.listen(connect: { try await openConnection(to: url, logger: logger) }, logger: logger) { outcome in
                        reportFirstAttempt.yield(outcome)
                        reportFirstAttempt.finish()
                    }
                }
            }
        }
        let catalog = PostgresDatabase(client: client, url: url, logger: logger, connectionWait: connectionWait, feed: feed, running: running)
        for await outcome in firstAttempt {
            if let outcome {
                await catalog.close()
                throw translated(outcome, url: url)
            }
        }
        return catalog
    }

    /// Stops the listener and the pool; operations fail afterwards.
    public func close() async {
        await feed.stop()
        running.cancel()
        await running.value
    }

    /// A new connection of its own to `url`, or a one-line error saying why there is none.
    static func openConnection(to url: PostgresURL, logger: Logger) async throws -> PostgresConnection {
        do {
            return try await PostgresConnection.connect(configuration: url.connectionConfiguration(), id: 0, logger: logger)
        } catch {
            throw translated(error, url: url)
        }
    }

    // MARK: Transactions

    /// Runs `body` in one write transaction that notifies every listener of the catalog,
    /// and bumps this process's stamp once it committed. A transaction that deadlocked or
    /// failed to serialize with another is run again (`writeAttempts` in all).
    public func write<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                let value = try await withConnection("write") { connection in
                    try await connection.withTransaction(logger: self.logger) { connection in
                        // First, not last: sent only if the transaction commits either way, and not
                        // a round trip more while `body`'s locks (a spot's) are held.
                        try await connection.query("SELECT pg_notify(\(PostgresChangeFeed.channel), '')", logger: self.logger)
                        return try await body(PostgresTransaction(connection: connection, logger: self.logger))
                    }
                }
                feed.bump()
                return value
            } catch where Self.isRetryable(error) && attempt < Self.writeAttempts {
                attempt += 1
            } catch {
                throw Self.translated(error, url: url)
            }
        }
    }

    /// Runs `body` in one read-only snapshot (REPEATABLE READ) of the catalog, begun with its
    /// mode in one statement (a round trip fewer than BEGIN, then SET TRANSACTION).
    public func read<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T {
        do {
            return try await withConnection("read") { connection in
                try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: self.logger)
                let value: T
                do {
                    value = try await body(PostgresTransaction(connection: connection, logger: self.logger))
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: self.logger)
                    throw error
                }
                try await connection.query("COMMIT", logger: self.logger)
                return value
            }
        } catch {
            throw Self.translated(error, url: url)
        }
    }

    /// On one connection of the pool, each statement in a transaction of its own.
    public func readCommitted<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T {
        do {
            return try await withConnection("read") { connection in try await body(PostgresTransaction(connection: connection, logger: self.logger)) }
        } catch {
            throw Self.translated(error, url: url)
        }
    }

    public func query(_ sql: CatalogSQL) async throws -> [SQLRow] {
        do {
            return try await withConnection("statement") { connection in
                try await PostgresTransaction(connection: connection, logger: self.logger).rows(sql)
            }
        } catch {
            throw Self.translated(error, url: url)
        }
    }

    /// `SELECT 1` on a connection of the pool.
    public func checkHealth() async throws {
        _ = try await query("SELECT 1")
    }

    /// How often an operation looks whether its connection was closed under it.
    static let closedConnectionCheck: Duration = .seconds(1)

    /// Lends `body` a connection of the pool, waiting at most `connectionWait` for one
    /// (`outageWait` while the change listener cannot reach the server either: 503s, not a
    /// queue). A connection lent after the caller gave up is released unused. An operation
    /// whose connection stays closed under it for a `closedConnectionCheck` fails (see
    /// `ClosedConnectionWatch`). Each call is counted (swift-metrics) by `kind` (write, read,
    /// statement) and outcome (ok; refused: a rule such as the spot's limit said no; failed),
    /// with its time.
    private func withConnection<T: Sendable>(_ kind: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let wait = feed.problem == nil ? connectionWait : min(connectionWait, Self.outageWait)
        let lease = LeaseGate()
        let client = self.client
        let started = ContinuousClock.now
        do {
            let value = try await withDeadline(wait, expiry: { lease.giveUp() ? self.unreachable(after: wait) : nil }) {
                try await client.withConnection { connection in
                    guard lease.lend() else { throw CancellationError() }
                    let watch = ClosedConnectionWatch(connection)
                    return try await withDeadline(Self.closedConnectionCheck, expiry: watch.expiry) { try await body(connection) }
                }
            }
            Self.record(kind, outcome: "ok", since: started)
            return value
        } catch {
            let refused = (error as? SpotError).map { $0.kind != .unavailable && $0.kind != .internal } ?? false
            Self.record(kind, outcome: refused ? "refused" : "failed", since: started)
            throw error
        }
    }

    private static func record(_ kind: String, outcome: String, since started: ContinuousClock.Instant) {
        Counter(label: "spotstore_catalog_transactions_total", dimensions: [("kind", kind), ("outcome", outcome)]).increment()
        Timer(label: "spotstore_catalog_transaction_duration_seconds", dimensions: [("kind", kind)]).record(duration: ContinuousClock.now - started)
    }

    /// The error of an operation that got no connection in time, with what the listener
    /// last heard when it tried to connect.
    private func unreachable(after wait: Duration) -> SpotError {
        let seconds = wait.components.seconds
        if let problem = feed.problem { return SpotError(.unavailable, "the catalog has no connection for \(seconds) s: \(problem)") }
        return SpotError(.unavailable, "the catalog has no connection to PostgreSQL at \(url.endpoint) for \(seconds) s; retry shortly")
    }
}

/// Whether an operation should stop waiting for its connection: postgres-nio 1.33 can
/// leave a query sent on a connection that is being closed (the server ended it) without
/// an answer for good. Once the connection was closed at two checks in a row, the
/// operation fails as unavailable; the closed connection goes back to the pool, which
/// drops it, and the abandoned query holds nothing else.
private final class ClosedConnectionWatch: Sendable {
    private let connection: PostgresConnection
    private let seenClosed = Mutex(false)

    init(_ connection: PostgresConnection) {
        self.connection = connection
    }

    /// The operation's error once the connection was closed at the last check and still is.
    func expiry() -> (any Error)? {
        guard connection.isClosed else { return nil }
        return seenClosed.withLock { seen in
            defer { seen = true }
            return seen ? SpotError(.unavailable, "the connection to PostgreSQL closed during the operation; retry shortly") : nil
        }
    }
}

/// Where one lease of `PostgresDatabase.withConnection` is: waiting for a connection, lent
/// one, or given up on by its caller. Whichever of the last two comes first holds.
private final class LeaseGate: Sendable {
    private enum Phase { case waiting, lent, givenUp }

    private let phase = Mutex(Phase.waiting)

    /// Whether the body may use the connection just lent: not when the caller gave up.
    func lend() -> Bool { move(to: .lent) }

    /// Whether the caller may give up: only while no connection was lent.
    func giveUp() -> Bool { move(to: .givenUp) }

    private func move(to next: Phase) -> Bool {
        phase.withLock { current in
            guard current == .waiting else { return false }
            current = next
            return true
        }
    }
}

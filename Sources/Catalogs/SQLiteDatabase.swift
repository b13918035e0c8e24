import Foundation
import GRDB
import SQLCatalog
import SpotCore
import Synchronization

/// The embedded catalog: `SQLCatalog` on SQLite, in one file that several processes may share.
public typealias SQLiteCatalog = SQLCatalog<SQLiteDatabase>

extension SQLCatalog where Database == SQLiteDatabase {
    /// Opens the catalog file at `path` (see `SQLiteDatabase.init(path:)`).
    public init(path: String) throws {
        self.init(try SQLiteDatabase(path: path))
    }

    /// A new, empty catalog in memory, for tests; it is gone when the last copy of the value is.
    public static func inMemory() throws -> SQLiteCatalog {
        SQLiteCatalog(try SQLiteDatabase(DatabaseQueue(configuration: SQLiteDatabase.makeConfiguration())))
    }
}

/// SQLite through GRDB, as a `CatalogDatabase`.
///
/// A file catalog is a `DatabasePool` in WAL mode, so readers never wait for the writer.
/// Writes that arrive together share one IMMEDIATE transaction, each in a savepoint of its
/// own (group commit: one sync of the WAL for all); a writer that finds another connection
/// or process holding the write lock waits up to `busyTimeout`, then fails with
/// `.unavailable`. Foreign keys are enforced. The schema is migrated when the database is
/// opened; shipped migrations never change.
///
/// A transaction's statements run synchronously on the connection's thread: the script
/// runs to its end without suspending (`runToCompletion`), as SQLite never makes it wait.
public struct SQLiteDatabase: CatalogDatabase {
    /// How long a write waits for the write lock held by another connection or process.
    static let busyTimeout: TimeInterval = 10

    /// Access to the database.
    let dbWriter: any DatabaseWriter
    /// Runs writes, several to a transaction when they arrive together.
    package let groupCommit: SQLiteGroupCommit
    public let changes: any CatalogChangeFeed
    public var dialect: SQLDialect { .sqlite }

    /// Wraps `dbWriter` and migrates its schema to the latest version; `changes` is the
    /// file's feed, `nil` for a database in memory (nothing is kept then).
    ///
    /// - important: Create `dbWriter` with `makeConfiguration()`.
    init(_ dbWriter: any DatabaseWriter, changes: SQLiteChangeFeed? = nil) throws {
        self.dbWriter = dbWriter
        self.groupCommit = SQLiteGroupCommit(dbWriter)
        self.changes = changes ?? NoChangeFeed()
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
        try self.init(path: path, busyTimeout: Self.busyTimeout)
    }

    /// `init(path:)` with how long a write waits for another connection's write lock.
    package init(path: String, busyTimeout: TimeInterval) throws {
        let pool = try DatabasePool(path: path, configuration: Self.makeConfiguration(busyTimeout: busyTimeout))
        // GRDB sets up WAL mode with synchronous=NORMAL, which syncs the WAL only at a
        // checkpoint: a commit acknowledged since could vanish in a power cut. FULL syncs it
        // at every commit, one sync per group-commit transaction. Only the writer commits.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        try self.init(pool, changes: SQLiteChangeFeed(path: path))
    }

    /// Runs `body` in a savepoint of the next IMMEDIATE transaction, which the writes that
    /// arrive meanwhile share (`SQLiteGroupCommit`), and returns once it has committed.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T {
        do {
            return try await groupCommit.write { db in
                let transaction = SQLiteTransaction(db: db)
                return try runToCompletion { try await body(transaction) }
            }
        } catch {
            throw Self.translated(error)
        }
    }

    /// Runs `body` in a read transaction on the calling thread. Most reads are the short
    /// indexed lookups every request makes (token, object, spot), for which a hop to a
    /// reader's dispatch queue and back costs more than the query. It waits only while
    /// every reader of the pool is busy, and in WAL mode readers never wait for the writer.
    ///
    /// - important: Do not mix in GRDB's `async` reads: they keep a reader until their task
    ///   resumes on the cooperative pool, so cooperative threads blocked here waiting for a
    ///   reader would deadlock with them.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T {
        do {
            return try readNow { db in
                let transaction = SQLiteTransaction(db: db)
                return try runToCompletion { try await body(transaction) }
            }
        } catch {
            throw Self.translated(error)
        }
    }

    /// One read transaction, as `read`.
    public func readCommitted<T: Sendable>(_ body: @escaping @Sendable (any CatalogTransaction) async throws -> T) async throws -> T {
        try await read(body)
    }

    /// Runs `body` in a read transaction of the pool, synchronously (never GRDB's `async` read).
    func readNow<T>(_ body: (GRDB.Database) throws -> T) throws -> T {
        try dbWriter.read(body)
    }

    public func query(_ sql: CatalogSQL) async throws -> [SQLRow] {
        try await read { transaction in try await transaction.rows(sql) }
    }

    /// Reads the schema's first page.
    public func checkHealth() async throws {
        _ = try await query("SELECT count(*) FROM sqlite_master")
    }

    /// The connection settings every catalog connection uses.
    static func makeConfiguration(busyTimeout: TimeInterval = busyTimeout) -> Configuration {
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(busyTimeout)
        // Statement journals and sorts in memory: on disk, a write in a savepoint made and
        // removed a file of its own (an inode created and freed per commit).
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA temp_store = MEMORY") }
        return config
    }

    /// `error` as the `SpotError` a request answers with: busy past the timeout or locked
    /// is `.unavailable` (503, retry), a full disk `.insufficientStorage`, a violated
    /// constraint `.conflict`, anything else of SQLite `.internal` with its message.
    static func translated(_ error: any Error) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return SpotError(.unavailable, "the catalog is busy: another connection or process holds its write lock; retry shortly")
        case .SQLITE_FULL:
            return SpotError(.insufficientStorage, "the catalog cannot grow: the store's disk is full; free space and retry")
        case .SQLITE_CONSTRAINT:
            return SpotError(.conflict, "the catalog refused the change: \(error.message ?? "a constraint failed")")
        default:
            return SpotError(.internal, "the catalog's SQLite failed: \(error.message ?? "\(error.resultCode)")")
        }
    }
}

/// One transaction on a GRDB connection, used only inside its access closure.
private struct SQLiteTransaction: CatalogTransaction, @unchecked Sendable {
    let db: GRDB.Database

    nonisolated(nonsending) func rows(_ sql: CatalogSQL) async throws -> [SQLRow] {
        let (text, values) = sql.rendered(for: .sqlite)
        let statement = try db.cachedStatement(sql: text)
        return try Row.fetchAll(statement, arguments: StatementArguments(values.map(Self.databaseValue))).map { row in
            SQLRow(row.databaseValues.map(Self.sqlValue))
        }
    }

    /// Nothing to take: SQLite's write transactions take turns as a whole.
    nonisolated(nonsending) func lock(_ keys: [String]) async throws {}

    private static func databaseValue(_ value: SQLValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .integer(let integer): integer.databaseValue
        case .real(let real): real.databaseValue
        case .text(let text): text.databaseValue
        case .boolean(let boolean): boolean.databaseValue
        case .date(let date): date.databaseValue
        case .bytes(let bytes): Data(bytes).databaseValue
        case .texts: preconditionFailure("SQLite binds a list as one value per item (CatalogSQL.Piece.oneOf)")
        }
    }

    private static func sqlValue(_ value: DatabaseValue) -> SQLValue {
        switch value.storage {
        case .null: .null
        case .int64(let integer): .integer(integer)
        case .double(let real): .real(real)
        case .string(let text): .text(text)
        case .blob(let data): .bytes([UInt8](data))
        }
    }
}

/// Runs `body` to its end on the calling thread and returns what it gave. `body` must not
/// suspend (it only awaits `SQLiteTransaction`, which never does): GRDB lends a connection
/// only to synchronous code on its own thread.
private func runToCompletion<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    Task.immediate {
        do { outcome.set(.success(try await body())) } catch { outcome.set(.failure(error)) }
    }
    guard let result = outcome.result else {
        preconditionFailure("a catalog transaction suspended on SQLite: it may await only its transaction")
    }
    return try result.get()
}

/// Where `runToCompletion` finds the outcome of its task.
private final class Outcome<T: Sendable>: Sendable {
    private let value = Mutex<Result<T, any Error>?>(nil)

    var result: Result<T, any Error>? { value.withLock { $0 } }

    func set(_ result: Result<T, any Error>) {
        value.withLock { $0 = result }
    }
}

/// The feed of a catalog only this process uses (in memory): no stamp, so nothing is kept.
struct NoChangeFeed: CatalogChangeFeed {
    func stamp() throws -> Int64? { nil }
    var stalenessBound: Duration { .zero }
}

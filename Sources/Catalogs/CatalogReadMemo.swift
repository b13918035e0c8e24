import GRDB
import GRDBSQLite
import SpotCore
import Synchronization

/// The answers of the catalog reads every download makes (a token's user; an object with
/// its spot and damage marks), kept while the catalog file is unchanged.
///
/// Before every answer it reads SQLite's `PRAGMA data_version` on a read-only connection
/// of its own. That number changes whenever another connection commits, in this process
/// or in another one (`spotstore users`, `fsck --repair`), and then every kept answer is
/// dropped. So an answer is never older than the last commit, and a revoked token or a
/// deleted object stops working at once, as when every read went to the tables.
final class CatalogReadMemo: Sendable {
    /// Answers kept at most; all are dropped when there would be more.
    static let capacity = 10_000

    private struct Answers {
        var version: Int64 = -1
        var users: [Digest: User?] = [:]
        var objects: [ObjectPath: ObjectReading] = [:]
    }

    private let probe: DataVersionProbe
    private let answers = Mutex(Answers())

    /// Opens the probe connection on the catalog file at `path`, which must exist.
    init(path: String) throws {
        probe = try DataVersionProbe(path: path)
    }

    /// The user of the token with digest `digest`, as `read` finds it.
    func user(tokenDigest digest: Digest, read: () throws -> User?) throws -> User? {
        try answer(digest, in: \.users, read: read)
    }

    /// The object at `path` with its spot and damage marks, as `read` finds it.
    func objectForReading(at path: ObjectPath, read: () throws -> ObjectReading) throws -> ObjectReading {
        try answer(path, in: \.objects, read: read)
    }

    private func answer<Key: Hashable & Sendable, Value: Sendable>(
        _ key: Key, in table: WritableKeyPath<Answers, [Key: Value]>, read: () throws -> Value
    ) throws -> Value {
        let version = try probe.version()
        let kept = answers.withLock { answers in
            if answers.version != version { answers = Answers(version: version) }
            return answers[keyPath: table][key]
        }
        if let kept { return kept }
        // Read after the probe, so the answer is at least as new as `version`; it is kept
        // only while no commit has been seen since.
        let value = try read()
        answers.withLock { answers in
            guard answers.version == version else { return }
            if answers.users.count + answers.objects.count >= Self.capacity { answers = Answers(version: version) }
            answers[keyPath: table][key] = value
        }
        return value
    }
}

/// A read-only SQLite connection that only runs `PRAGMA data_version`. Plain SQLite, not
/// GRDB: the probe runs before every memo answer, and GRDB's queue and statement handling
/// cost several times the query.
private final class DataVersionProbe: Sendable {
    /// The connection and its one prepared statement; SQLite's handles are not thread-safe
    /// (opened without SQLite's own mutex), the lock serializes them.
    private let handles: Mutex<(connection: OpaquePointer, statement: OpaquePointer)>

    init(path: String) throws {
        var connection: OpaquePointer?
        var statement: OpaquePointer?
        let opened = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        if opened == SQLITE_OK, sqlite3_busy_timeout(connection, Int32(SQLiteCatalog.busyTimeout * 1000)) == SQLITE_OK,
           sqlite3_prepare_v2(connection, "PRAGMA data_version", -1, &statement, nil) == SQLITE_OK,
           let connection, let statement {
            handles = Mutex((connection, statement))
            return
        }
        let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
        sqlite3_finalize(statement)
        sqlite3_close(connection)
        throw DatabaseError(resultCode: ResultCode(rawValue: opened == SQLITE_OK ? SQLITE_ERROR : opened), message: "cannot open \(path) to watch for changes: \(message)")
    }

    deinit {
        handles.withLock { handles in
            sqlite3_finalize(handles.statement)
            sqlite3_close(handles.connection)
        }
    }

    /// The connection's data version: it changes when another connection has committed.
    func version() throws -> Int64 {
        try handles.withLock { handles throws(DatabaseError) -> Int64 in
            defer { sqlite3_reset(handles.statement) }
            let stepped = sqlite3_step(handles.statement)
            guard stepped == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: stepped), message: String(cString: sqlite3_errmsg(handles.connection)))
            }
            return sqlite3_column_int64(handles.statement, 0)
        }
    }
}

import GRDB
import GRDBSQLite
import SQLCatalog
import SpotCore
import Synchronization

/// The change feed of an SQLite file: tells whether any connection, in any process, has committed.
///
/// The fast way reads the header of the WAL index: the shared memory (`-shm` file) where
/// every SQLite connection to the file, in any process, publishes each commit, with a
/// counter it increments. The memory is SQLite's own mapping for this connection
/// (`xShmMap` of the VFS), read without a lock the way SQLite's readers do: the two copies
/// of the header are read in the opposite order to the one writers write them in, and
/// equal copies are a finished commit. No system call, no lock: a probe this cheap can
/// run before every answer of a busy server. Its numbers are negative.
///
/// When the header cannot be read that way (not a WAL database, a header being written,
/// a layout SQLite no longer uses), the probe runs `PRAGMA data_version` on the connection
/// instead (positive numbers). Plain SQLite, not GRDB: GRDB's queue and statement handling
/// cost several times the query.
final class SQLiteChangeFeed: CatalogChangeFeed {
    /// The WAL index is shared memory: every process sees a commit as it is published.
    var stalenessBound: Duration { .zero }

    /// The connection and its one prepared statement; SQLite's handles are not thread-safe
    /// (opened without SQLite's own mutex), the lock serializes them.
    private let handles: Mutex<(connection: OpaquePointer, statement: OpaquePointer)>
    /// The start of the WAL index (its header), mapped by SQLite while the connection is open.
    private nonisolated(unsafe) let walIndex: UnsafeRawPointer?

    /// The WAL index format this probe reads (`iVersion` of the header: SQLite 3.7.0's).
    static let walIndexVersion: UInt32 = 3_007_000

    init(path: String) throws {
        var connection: OpaquePointer?
        var statement: OpaquePointer?
        let opened = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        if opened == SQLITE_OK, sqlite3_busy_timeout(connection, Int32(SQLiteDatabase.busyTimeout * 1000)) == SQLITE_OK,
           sqlite3_prepare_v2(connection, "PRAGMA data_version", -1, &statement, nil) == SQLITE_OK,
           let connection, let statement {
            // One read opens the WAL and its index; then SQLite's mapping can be had.
            walIndex = (try? Self.step(connection, statement)) == nil ? nil : Self.mapWalIndex(connection)
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

    /// A number that changes when another connection has committed.
    func stamp() throws -> Int64? {
        if let walIndex, let stamp = Self.headerStamp(walIndex) { return stamp }
        return try handles.withLock { handles throws(DatabaseError) -> Int64 in try Self.step(handles.connection, handles.statement) }
    }

    /// Runs `PRAGMA data_version`.
    private static func step(_ connection: OpaquePointer, _ statement: OpaquePointer) throws(DatabaseError) -> Int64 {
        defer { sqlite3_reset(statement) }
        let stepped = sqlite3_step(statement)
        guard stepped == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: stepped), message: String(cString: sqlite3_errmsg(connection)))
        }
        return sqlite3_column_int64(statement, 0)
    }

    /// SQLite's mapping of the first region of the connection's WAL index, or `nil` when
    /// the database is not in WAL mode or the VFS maps no shared memory.
    private static func mapWalIndex(_ connection: OpaquePointer) -> UnsafeRawPointer? {
        var journal: OpaquePointer?
        defer { sqlite3_finalize(journal) }
        guard sqlite3_prepare_v2(connection, "PRAGMA journal_mode", -1, &journal, nil) == SQLITE_OK, sqlite3_step(journal) == SQLITE_ROW,
              let mode = sqlite3_column_text(journal, 0), String(cString: mode) == "wal"
        else { return nil }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(connection, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let methods = file?.pointee.pMethods, methods.pointee.iVersion >= 2, let map = methods.pointee.xShmMap
        else { return nil }
        var region: UnsafeMutableRawPointer?
        guard map(file, 0, 32 * 1024, 0, &region) == SQLITE_OK, let region else { return nil }
        return UnsafeRawPointer(region)
    }

    /// The stamp of the WAL index header at `index` (its two 48-byte copies), or `nil`
    /// when the copies differ (a commit is being published), the index is not
    /// initialized, or its format is not `walIndexVersion`.
    static func headerStamp(_ index: UnsafeRawPointer) -> Int64? {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 12) { words in
            // Writers write the second copy first, then the first: read them the other way.
            for word in 0..<6 { words[word] = index.load(fromByteOffset: word * 8, as: UInt64.self) }
            atomicMemoryFence(ordering: .acquiring)
            for word in 6..<12 { words[word] = index.load(fromByteOffset: word * 8, as: UInt64.self) }
            guard words[0..<6].elementsEqual(words[6..<12]) else { return nil }
            let header = UnsafeRawBufferPointer(words)
            // iVersion at 0, iChange (one more each commit) at 8, isInit at 12; then the
            // page size, last frame, database size, checksums and salts of the WAL.
            guard header.load(fromByteOffset: 0, as: UInt32.self) == walIndexVersion, header[12] != 0 else { return nil }
            let change = UInt64(header.load(fromByteOffset: 8, as: UInt32.self))
            var rest: UInt64 = 0
            for word in 2..<6 { rest = (rest ^ words[word]) &* 0x9E37_79B9_7F4A_7C15 }
            // Negative, so never equal to a `data_version`; the other 31 bits tell the WAL
            // contents apart should the counter ever come back (it wraps, or is rebuilt).
            return Int64(bitPattern: 1 << 63 | (rest >> 33) << 32 | change)
        }
    }
}

import Foundation
import GRDB
import CatalogPlanning
import SpotCore

extension SQLiteCatalog {
    /// Records `session` in one IMMEDIATE transaction in which the spot decides as `commit`
    /// does, counting the places its live sessions hold (`SpotOccupancy`); expired sessions
    /// stay for the sweeper but hold none. The write lock is held from the start, so
    /// sessions started at once from any connection or process take turns.
    /// - Throws: `.rateLimited` when the owner has `openLimit` live sessions; `.forbidden`
    ///   or `.conflict` when the spot refuses; `.conflict` when a session with the same id exists.
    public func startUpload(_ session: UploadSession, now: Date, openLimit: Int) async throws {
        try await write { db in
            let open = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM uploadSessions WHERE owner = ? AND expiresAt > ?", arguments: [session.owner, now]) ?? 0
            if open >= openLimit { throw SpotError.tooManyOpenUploads(limit: openLimit) }
            if let spotId = session.path.topFolder {
                let spot = SpotKey(bucket: session.path.bucket, id: spotId)
                let occupancy = try Self.occupancy(
                    of: spot, admitting: session.path.name, by: SpotOccupancy.counted(session.owner, session.admission), now: now, db)
                let isReplacement = try ObjectRecord.exists(db, key: ObjectRecord.key(session.path))
                if let refusal = occupancy.refusal(of: session.owner, admission: session.admission, isReplacement: isReplacement) {
                    throw refusal
                }
            }
            do {
                try UploadSessionRecord(session).insert(db)
            } catch let error as DatabaseError where error.isUniqueViolation {
                throw SpotError.uploadSessionExists
            }
        }
    }

    public func uploadSession(_ id: String) async throws -> UploadSession? {
        try readNow { db in try Self.fetchUploadSession(id, db) }
    }

    /// Appends `chunk` to session `id` in one transaction: the session is checked
    /// (`UploadSession.checkAppending`), then the lease is released and the chunk recorded.
    public func appendChunk(
        _ chunk: UploadChunk, to id: String, lease: LeaseID?, now: Date, expiresAt: Date
    ) async throws -> UploadSession {
        try await write { db in
            guard var session = try Self.fetchUploadSession(id, db) else { throw SpotError.noUploadSession }
            try session.checkAppending(chunk, at: now)
            if let lease { try Self.release(heldLease: lease, db) }
            try UploadChunkRecord(chunk, of: id).insert(db)
            try db.execute(sql: "UPDATE uploadSessions SET expiresAt = ? WHERE id = ?", arguments: [expiresAt, id])
            session.chunks.append(chunk)
            session.expiresAt = expiresAt
            return session
        }
    }

    public func declareSize(_ size: Int64, of id: String) async throws -> UploadSession? {
        try await write { db in
            guard var session = try Self.fetchUploadSession(id, db) else { return nil }
            try session.checkDeclaring(size)
            try db.execute(sql: "UPDATE uploadSessions SET declaredSize = ? WHERE id = ?", arguments: [size, id])
            session.declaredSize = size
            return session
        }
    }

    /// Removes session `id` (with `expiredBefore`, only if it expired before then) in one
    /// transaction; its chunks' rows go with it (cascade).
    public func endUpload(_ id: String, expiredBefore cutoff: Date?) async throws -> UploadSession? {
        try await write { db in
            guard let session = try Self.fetchUploadSession(id, db) else { return nil }
            if let cutoff, !session.expired(before: cutoff) { return nil }
            try UploadSessionRecord.deleteOne(db, key: id)
            return session
        }
    }

    public func finishedUpload(_ id: String) async throws -> FinishedUpload? {
        try readNow { db in try FinishedUploadRecord.fetchOne(db, key: id)?.finishedUpload() }
    }

    /// Removes the finished uploads with `finishedAt` before `cutoff` in one statement.
    public func forgetFinishedUploads(finishedBefore cutoff: Date) async throws -> Int {
        try await write { db in try FinishedUploadRecord.filter(Column("finishedAt") < cutoff).deleteAll(db) }
    }

    /// Sessions that expired before `now`, earliest first (then by id), from one snapshot.
    public func expiredUploads(before now: Date, limit: Int) async throws -> [UploadSession] {
        try readNow { db in
            let records = try UploadSessionRecord
                .filter(Column("expiresAt") < now)
                .order(Column("expiresAt"), Column("id"))
                .limit(max(limit, 0))
                .fetchAll(db)
            return try records.map { record in try record.session(chunks: try Self.uploadChunks(of: record.id, db)) }
        }
    }

    /// Session `id` with its chunks, or `nil`.
    private static func fetchUploadSession(_ id: String, _ db: Database) throws -> UploadSession? {
        guard let record = try UploadSessionRecord.fetchOne(db, key: id) else { return nil }
        return try record.session(chunks: try uploadChunks(of: id, db))
    }

    /// The chunks of session `id`, in offset order (read by column: a session may have thousands).
    private static func uploadChunks(of id: String, _ db: Database) throws -> [UploadChunk] {
        try Array(Row.fetchCursor(db, sql: "SELECT offset, size, digest FROM uploadChunks WHERE sessionId = ? ORDER BY offset", arguments: [id]).map { row in
            UploadChunk(offset: row[0], size: row[1], digest: try (row[2] as String?).map(storedDigest))
        })
    }
}

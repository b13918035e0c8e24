import CatalogPlanning
import Foundation
import PostgresNIO
import SpotCore

extension PostgresCatalog {
    /// Records `session` in one transaction in which the spot decides as `commit` does,
    /// counting the places its live sessions hold (`SpotOccupancy`); expired sessions stay
    /// for the sweeper but hold none. The spot's admission lock (`lockAdmission`) is held
    /// throughout, so sessions started and objects committed into one spot at once, from
    /// any connection or process, take turns; so do sessions started by one owner (an
    /// advisory lock on the owner), so their count is current.
    /// - Throws: `.rateLimited` when the owner has `openLimit` live sessions; `.forbidden`
    ///   or `.conflict` when the spot refuses; `.conflict` when a session with the same id exists.
    public func startUpload(_ session: UploadSession, now: Date, openLimit: Int) async throws {
        let record = UploadSessionRecord(session)
        try await write { connection in
            let logger = self.logger
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtextextended(\("uploads of \(record.owner)"), 0))", logger: logger)
            let rows = try await connection.query(
                "SELECT COUNT(*) FROM upload_sessions WHERE owner = \(record.owner) AND expires_at > \(now)", logger: logger).collect()
            let open = try rows.first?.decode(Int.self, at: 0) ?? 0
            if open >= openLimit { throw SpotError.tooManyOpenUploads(limit: openLimit) }
            if let spotId = record.spotId {
                let spot = SpotKey(bucket: record.bucket, id: spotId)
                try await Self.lockAdmission(to: spot, connection, logger: logger)
                let (occupancy, isReplacement) = try await Self.lockedOccupancy(
                    of: spot, admitting: record.name, by: SpotOccupancy.counted(record.owner, session.admission), now: now,
                    connection, logger: logger)
                if let refusal = occupancy.refusal(of: record.owner, admission: session.admission, isReplacement: isReplacement) {
                    throw refusal
                }
            }
            let inserted = try await connection.query("""
                INSERT INTO upload_sessions (\(unescaped: Self.uploadSessionColumns))
                VALUES (\(record.id), \(record.bucket), \(record.name), \(record.spotId), \(record.owner), \(record.declaredSize),
                        \(record.maxObjects), \(record.requiresOwnership), \(record.terms), \(record.createdAt), \(record.expiresAt))
                ON CONFLICT (id) DO NOTHING
                RETURNING id
                """, logger: logger).collect()
            guard !inserted.isEmpty else { throw SpotError.uploadSessionExists }
        }
    }

    public func uploadSession(_ id: String) async throws -> UploadSession? {
        try await read { connection in try await Self.uploadSession(id, connection, logger: self.logger) }
    }

    /// Appends `chunk` to session `id` in one transaction holding the session's row
    /// (`FOR UPDATE`), so two appends at one offset take turns and the second is refused:
    /// the session is checked (`UploadSession.checkAppending`), then the lease is released
    /// and the chunk recorded.
    public func appendChunk(
        _ chunk: UploadChunk, to id: String, lease: LeaseID?, now: Date, expiresAt: Date
    ) async throws -> UploadSession {
        try await write { connection in
            let logger = self.logger
            guard var session = try await Self.uploadSession(id, lock: true, connection, logger: logger) else { throw SpotError.noUploadSession }
            try session.checkAppending(chunk, at: now)
            if let lease { try await Self.release(heldLease: lease, connection, logger: logger) }
            try await connection.query("""
                INSERT INTO upload_chunks (session_id, "offset", size, digest) VALUES (\(id), \(chunk.offset), \(chunk.size), \(chunk.digest?.hex))
                """, logger: logger)
            try await connection.query("UPDATE upload_sessions SET expires_at = \(expiresAt) WHERE id = \(id)", logger: logger)
            session.chunks.append(chunk)
            session.expiresAt = expiresAt
            return session
        }
    }

    public func declareSize(_ size: Int64, of id: String) async throws -> UploadSession? {
        try await write { connection in
            guard var session = try await Self.uploadSession(id, lock: true, connection, logger: self.logger) else { return nil }
            try session.checkDeclaring(size)
            try await connection.query("UPDATE upload_sessions SET declared_size = \(size) WHERE id = \(id)", logger: self.logger)
            session.declaredSize = size
            return session
        }
    }

    /// Removes session `id` (with `expiredBefore`, only if it expired before then) in one
    /// transaction holding its row (`FOR UPDATE`), so an append extending it meanwhile
    /// keeps it; its chunks' rows go with it (cascade).
    public func endUpload(_ id: String, expiredBefore cutoff: Date?) async throws -> UploadSession? {
        try await write { connection in
            guard let session = try await Self.uploadSession(id, lock: true, connection, logger: self.logger) else { return nil }
            if let cutoff, !session.expired(before: cutoff) { return nil }
            try await connection.query("DELETE FROM upload_sessions WHERE id = \(id)", logger: self.logger)
            return session
        }
    }

    public func finishedUpload(_ id: String) async throws -> FinishedUpload? {
        try await query("""
            SELECT id, owner, bucket, name, generation, size, finished_at FROM finished_uploads WHERE id = \(id)
            """).first.map { row in
            let (id, owner, bucket, name, generation, size, finishedAt) =
                try row.decode((String, String, String, String, Int64, Int64, Date).self)
            return try FinishedUploadRecord(
                id: id, owner: owner, bucket: bucket, name: name, generation: generation, size: size, finishedAt: finishedAt
            ).finishedUpload()
        }
    }

    /// Removes the finished uploads with `finished_at` before `cutoff` in one statement.
    public func forgetFinishedUploads(finishedBefore cutoff: Date) async throws -> Int {
        try await write { connection in
            try await connection.query(
                "DELETE FROM finished_uploads WHERE finished_at < \(cutoff) RETURNING id", logger: self.logger
            ).collect().count
        }
    }

    /// Records `record` (replacing a row of the same id: the latest commit of an id wins).
    static func insert(_ record: FinishedUploadRecord, _ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO finished_uploads (id, owner, bucket, name, generation, size, finished_at)
            VALUES (\(record.id), \(record.owner), \(record.bucket), \(record.name), \(record.generation), \(record.size),
                    \(record.finishedAt))
            ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, bucket = EXCLUDED.bucket, name = EXCLUDED.name,
                generation = EXCLUDED.generation, size = EXCLUDED.size, finished_at = EXCLUDED.finished_at
            """, logger: logger)
    }

    /// Sessions that expired before `now`, earliest first (then by id), from one snapshot.
    public func expiredUploads(before now: Date, limit: Int) async throws -> [UploadSession] {
        try await read { connection in
            let records = try await connection.query("""
                SELECT \(unescaped: Self.uploadSessionColumns) FROM upload_sessions WHERE expires_at < \(now)
                ORDER BY expires_at, id LIMIT \(max(limit, 0))
                """, logger: self.logger).collect().map(Self.uploadSessionRecord)
            return try await Self.withChunks(records, connection, logger: self.logger)
        }
    }

    /// Session `id` with its chunks (its row locked `FOR UPDATE` with `lock`), or `nil`.
    private static func uploadSession(
        _ id: String, lock: Bool = false, _ connection: PostgresConnection, logger: Logger
    ) async throws -> UploadSession? {
        let query: PostgresQuery = lock
            ? "SELECT \(unescaped: uploadSessionColumns) FROM upload_sessions WHERE id = \(id) FOR UPDATE"
            : "SELECT \(unescaped: uploadSessionColumns) FROM upload_sessions WHERE id = \(id)"
        let records = try await connection.query(query, logger: logger).collect().map(uploadSessionRecord)
        return try await withChunks(records, connection, logger: logger).first
    }

    /// `records` as sessions with their chunks (in offset order): one query.
    private static func withChunks(
        _ records: [UploadSessionRecord], _ connection: PostgresConnection, logger: Logger
    ) async throws -> [UploadSession] {
        guard !records.isEmpty else { return [] }
        var chunks: [String: [UploadChunk]] = [:]
        for row in try await connection.query("""
            SELECT session_id, "offset", size, digest FROM upload_chunks WHERE session_id = ANY(\(records.map(\.id)))
            ORDER BY session_id, "offset"
            """, logger: logger).collect() {
            let (sessionId, offset, size, digest) = try row.decode((String, Int64, Int64, String?).self)
            chunks[sessionId, default: []].append(UploadChunk(offset: offset, size: size, digest: try digest.map(storedDigest)))
        }
        return try records.map { try $0.session(chunks: chunks[$0.id] ?? []) }
    }
}

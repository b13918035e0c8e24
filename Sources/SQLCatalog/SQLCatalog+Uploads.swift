import Foundation
import SpotCore

extension SQLCatalog {
    /// Sessions started by one owner take turns on a lock of the owner, so their count is
    /// current; sessions and commits into one spot take turns on the spot's admission lock.
    public func startUpload(_ session: UploadSession, now: Date, openLimit: Int) async throws {
        try await write { transaction in
            try await transaction.lock(["uploads of \(session.owner)"])
            let open = try await transaction.value(
                "SELECT COUNT(*) FROM upload_sessions WHERE owner = \(session.owner) AND expires_at > \(now)", as: Int.self) ?? 0
            if open >= openLimit { throw SpotError.tooManyOpenUploads(limit: openLimit) }
            if let spotId = session.path.topFolder {
                let spot = SpotKey(bucket: session.path.bucket, id: spotId)
                try await transaction.lock([spot.admissionLock])
                _ = try await Self.admit(session.owner, name: session.path.name, into: spot, admission: session.admission, now: now, transaction)
            }
            let inserted = try await transaction.rows("""
                INSERT INTO upload_sessions (\(unescaped: uploadSessionColumns)) VALUES (\(uploadSessionValues(session)))
                ON CONFLICT (id) DO NOTHING
                RETURNING id
                """)
            guard !inserted.isEmpty else { throw SpotError.uploadSessionExists }
        }
    }

    public func uploadSession(_ id: String) async throws -> UploadSession? {
        try await read { transaction in try await Self.uploadSession(id, transaction) }
    }

    /// Holds the session's row (`CatalogSQL.forUpdate`), so two appends at one offset take
    /// turns and the second is refused (`UploadSession.checkAppending`).
    public func appendChunk(
        _ chunk: UploadChunk, to id: String, lease: LeaseID?, now: Date, expiresAt: Date
    ) async throws -> UploadSession {
        try await write { transaction in
            guard var session = try await Self.uploadSession(id, lock: true, transaction) else { throw SpotError.noUploadSession }
            try session.checkAppending(chunk, at: now)
            if let lease { try await Self.release(heldLease: lease, transaction) }
            try await transaction.run("""
                INSERT INTO upload_chunks (session_id, "offset", size, digest) VALUES (\(id), \(chunk.offset), \(chunk.size), \(chunk.digest?.hex))
                """)
            try await transaction.run("UPDATE upload_sessions SET expires_at = \(expiresAt) WHERE id = \(id)")
            session.chunks.append(chunk)
            session.expiresAt = expiresAt
            return session
        }
    }

    public func declareSize(_ size: Int64, of id: String) async throws -> UploadSession? {
        try await write { transaction in
            guard var session = try await Self.uploadSession(id, lock: true, transaction) else { return nil }
            try session.checkDeclaring(size)
            try await transaction.run("UPDATE upload_sessions SET declared_size = \(size) WHERE id = \(id)")
            session.declaredSize = size
            return session
        }
    }

    /// Holds the session's row, so an append extending it meanwhile keeps it.
    public func endUpload(_ id: String, expiredBefore cutoff: Date?) async throws -> UploadSession? {
        try await write { transaction in
            guard let session = try await Self.uploadSession(id, lock: true, transaction) else { return nil }
            if let cutoff, !session.expired(before: cutoff) { return nil }
            try await transaction.run("DELETE FROM upload_sessions WHERE id = \(id)")
            return session
        }
    }

    public func finishedUpload(_ id: String) async throws -> FinishedUpload? {
        try await database.query("SELECT id, owner, bucket, name, generation, size, finished_at FROM finished_uploads WHERE id = \(id)")
            .first.map { row in
                FinishedUpload(
                    id: try row(0), owner: try row(1), path: try storedPath(bucket: row(2), name: row(3)), generation: try row(4),
                    size: try row(5), finishedAt: try row(6))
            }
    }

    public func forgetFinishedUploads(finishedBefore cutoff: Date) async throws -> Int {
        try await write { transaction in
            try await transaction.rows("DELETE FROM finished_uploads WHERE finished_at < \(cutoff) RETURNING id").count
        }
    }

    /// From one snapshot; ties in expiry go by id.
    public func expiredUploads(before now: Date, limit: Int) async throws -> [UploadSession] {
        try await read { transaction in
            let sessions = try await transaction.rows("""
                SELECT \(unescaped: uploadSessionColumns) FROM upload_sessions WHERE expires_at < \(now)
                ORDER BY expires_at, id LIMIT \(max(limit, 0))
                """).map(UploadSession.init)
            return try await Self.withChunks(sessions, transaction)
        }
    }

    /// Session `id` with its chunks (its row locked with `lock`), or `nil`.
    private static func uploadSession(_ id: String, lock: Bool = false, _ transaction: any CatalogTransaction) async throws -> UploadSession? {
        let query: CatalogSQL = "SELECT \(unescaped: uploadSessionColumns) FROM upload_sessions WHERE id = \(id)"
        return try await withChunks(try await transaction.rows(lock ? query + .forUpdate : query).map(UploadSession.init), transaction).first
    }

    /// `sessions` with their chunks (in offset order): one query.
    private static func withChunks(_ sessions: [UploadSession], _ transaction: any CatalogTransaction) async throws -> [UploadSession] {
        guard !sessions.isEmpty else { return [] }
        var chunks: [String: [UploadChunk]] = [:]
        for row in try await transaction.rows("""
            SELECT session_id, "offset", size, digest FROM upload_chunks WHERE session_id \(oneOf: sessions.map(\.id))
            ORDER BY session_id, "offset"
            """) {
            chunks[try row(0) as String, default: []].append(
                UploadChunk(offset: try row(1), size: try row(2), digest: try (row(3) as String?).map(storedDigest)))
        }
        return sessions.map { session in
            var session = session
            session.chunks = chunks[session.id] ?? []
            return session
        }
    }
}

import Foundation
import SpotCore

extension SQLCatalog {
    /// Records `session` in one transaction in which the spot decides as `commit` does,
    /// counting the places its live sessions hold (`SpotOccupancy`); expired sessions stay
    /// for the sweeper but hold none. The spot's admission lock is held throughout, so
    /// sessions started and objects committed into one spot at once, from any connection
    /// or process, take turns; so do sessions started by one owner (a lock on the owner),
    /// so their count is current.
    /// - Throws: `.rateLimited` when the owner has `openLimit` live sessions; `.forbidden`
    ///   or `.conflict` when the spot refuses; `.conflict` when a session with the same id exists.
    public func startUpload(_ session: UploadSession, now: Date, openLimit: Int) async throws {
        let record = UploadSessionRecord(session)
        try await write { transaction in
            try await transaction.lock(["uploads of \(record.owner)"])
            let open = try await transaction.value(
                "SELECT COUNT(*) FROM upload_sessions WHERE owner = \(record.owner) AND expires_at > \(now)", as: Int.self) ?? 0
            if open >= openLimit { throw SpotError.tooManyOpenUploads(limit: openLimit) }
            if let spotId = record.spotId {
                let spot = SpotKey(bucket: record.bucket, id: spotId)
                try await transaction.lock([spot.admissionLock])
                let (occupancy, isReplacement) = try await Self.lockedOccupancy(
                    of: spot, admitting: record.name, by: SpotOccupancy.counted(record.owner, session.admission), now: now, transaction)
                if let refusal = occupancy.refusal(of: record.owner, admission: session.admission, isReplacement: isReplacement) {
                    throw refusal
                }
            }
            let inserted = try await transaction.rows("""
                INSERT INTO upload_sessions (\(unescaped: uploadSessionColumns))
                VALUES (\(record.id), \(record.bucket), \(record.name), \(record.spotId), \(record.owner), \(record.declaredSize),
                        \(record.maxObjects), \(record.requiresOwnership), \(record.terms), \(record.createdAt), \(record.expiresAt))
                ON CONFLICT (id) DO NOTHING
                RETURNING id
                """)
            guard !inserted.isEmpty else { throw SpotError.uploadSessionExists }
        }
    }

    public func uploadSession(_ id: String) async throws -> UploadSession? {
        try await read { transaction in try await Self.uploadSession(id, transaction) }
    }

    /// Appends `chunk` to session `id` in one transaction holding the session's row
    /// (`CatalogSQL.forUpdate`), so two appends at one offset take turns and the second is refused:
    /// the session is checked (`UploadSession.checkAppending`), then the lease is released
    /// and the chunk recorded.
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

    /// Removes session `id` (with `expiredBefore`, only if it expired before then) in one
    /// transaction holding its row, so an append extending it meanwhile keeps it; its
    /// chunks' rows go with it (cascade).
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
                try FinishedUploadRecord(
                    id: row(0), owner: row(1), bucket: row(2), name: row(3), generation: row(4), size: row(5), finishedAt: row(6)
                ).finishedUpload()
            }
    }

    /// Removes the finished uploads with `finished_at` before `cutoff` in one statement.
    public func forgetFinishedUploads(finishedBefore cutoff: Date) async throws -> Int {
        try await write { transaction in
            try await transaction.rows("DELETE FROM finished_uploads WHERE finished_at < \(cutoff) RETURNING id").count
        }
    }

    /// Records `record` (replacing a row of the same id: the latest commit of an id wins).
    static func insert(_ record: FinishedUploadRecord, _ transaction: any CatalogTransaction) async throws {
        try await transaction.run("""
            INSERT INTO finished_uploads (id, owner, bucket, name, generation, size, finished_at)
            VALUES (\(record.id), \(record.owner), \(record.bucket), \(record.name), \(record.generation), \(record.size),
                    \(record.finishedAt))
            ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, bucket = excluded.bucket, name = excluded.name,
                generation = excluded.generation, size = excluded.size, finished_at = excluded.finished_at
            """)
    }

    /// Sessions that expired before `now`, earliest first (then by id), from one snapshot.
    public func expiredUploads(before now: Date, limit: Int) async throws -> [UploadSession] {
        try await read { transaction in
            let records = try await transaction.rows("""
                SELECT \(unescaped: uploadSessionColumns) FROM upload_sessions WHERE expires_at < \(now)
                ORDER BY expires_at, id LIMIT \(max(limit, 0))
                """).map(UploadSessionRecord.init)
            return try await Self.withChunks(records, transaction)
        }
    }

    /// Session `id` with its chunks (its row locked with `lock`), or `nil`.
    private static func uploadSession(_ id: String, lock: Bool = false, _ transaction: any CatalogTransaction) async throws -> UploadSession? {
        let query: CatalogSQL = "SELECT \(unescaped: uploadSessionColumns) FROM upload_sessions WHERE id = \(id)"
        let records = try await transaction.rows(lock ? query + .forUpdate : query).map(UploadSessionRecord.init)
        return try await withChunks(records, transaction).first
    }

    /// `records` as sessions with their chunks (in offset order): one query.
    private static func withChunks(_ records: [UploadSessionRecord], _ transaction: any CatalogTransaction) async throws -> [UploadSession] {
        guard !records.isEmpty else { return [] }
        var chunks: [String: [UploadChunk]] = [:]
        for row in try await transaction.rows("""
            SELECT session_id, "offset", size, digest FROM upload_chunks WHERE session_id \(oneOf: records.map(\.id))
            ORDER BY session_id, "offset"
            """) {
            chunks[try row(0) as String, default: []].append(
                UploadChunk(offset: try row(1), size: try row(2), digest: try (row(3) as String?).map(storedDigest)))
        }
        return try records.map { try $0.session(chunks: chunks[$0.id] ?? []) }
    }
}

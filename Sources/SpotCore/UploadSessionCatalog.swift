import Foundation

/// Resumable uploads' sessions and their chunks. A live session holds a place in its spot
/// as an object would, until it is committed, ended or expires; a session a commit
/// completed is remembered for a while (`finishedUpload`) so a client whose last answer
/// was lost learns that the upload is complete.
public protocol UploadSessionCatalog: Sendable {
    /// Records `session` (with no chunks). When its path is in a spot (`topFolder`), the
    /// spot decides admission in the same transaction as for `commit`:
    /// `session.admission.refusal(of:into:isReplacement:)` refuses with `.forbidden` or
    /// `.conflict` (a spot without a row is owned by nobody yet; a path holding an object is
    /// a replacement and never full). Sessions hold places: each name in the spot that some
    /// live session (expiring after `now`) is uploading and no object has counts once. The
    /// session holds its place until it is committed, removed or expires.
    ///
    /// In the same transaction, `session.owner`'s live sessions (expiring after `now`) are
    /// counted across every server on the catalog: with `openLimit` or more, it is refused
    /// with `.rateLimited`.
    func startUpload(_ session: UploadSession, now: Date, openLimit: Int) async throws

    /// The session `id` with its chunks, or `nil` when there is none (never started,
    /// completed, cancelled or swept).
    func uploadSession(_ id: String) async throws -> UploadSession?

    /// Appends `chunk` to session `id` and sets its expiry, releasing `lease` (taken before
    /// the chunk's blob was stored; `nil` when the chunk is not a blob), and returns the session.
    /// - Throws: `.notFound` when there is no such session or it expired before `now`;
    ///   `.conflict` when `chunk.offset` is not the session's `received` (another request got
    ///   there first); `.tooLarge` when the chunk ends past `declaredSize`; `.unavailable`
    ///   when the lease is gone.
    func appendChunk(_ chunk: UploadChunk, to id: String, lease: LeaseID?, now: Date, expiresAt: Date) async throws -> UploadSession

    /// Sets the declared size of session `id` once the client tells it; `nil` when there is
    /// no such session. - Throws: `.conflict` when a different size was declared, or fewer
    /// bytes than already received.
    func declareSize(_ size: Int64, of id: String) async throws -> UploadSession?

    /// Removes session `id` with its chunks' rows (their blobs are left for gc) and returns
    /// it, or `nil` when there was none. With `expiredBefore`, only a session that expired
    /// before then is removed (a sweep must not remove a session a chunk just extended).
    func endUpload(_ id: String, expiredBefore: Date?) async throws -> UploadSession?

    /// The upload session `id` that a commit completed (`NewObject.uploadSession`), or `nil`:
    /// kept until `forgetFinishedUploads(finishedBefore:)`, so that a client whose last
    /// answer was lost learns that the upload is complete.
    func finishedUpload(_ id: String) async throws -> FinishedUpload?

    /// Forgets the finished uploads committed before `cutoff`; returns how many.
    func forgetFinishedUploads(finishedBefore cutoff: Date) async throws -> Int

    /// Up to `limit` sessions that expired before `now`, earliest first: for the sweeper.
    func expiredUploads(before now: Date, limit: Int) async throws -> [UploadSession]
}

extension UploadSessionCatalog {
    /// Records `session` with no limit on its owner's open sessions (see `startUpload(_:now:openLimit:)`).
    public func startUpload(_ session: UploadSession, now: Date) async throws {
        try await startUpload(session, now: now, openLimit: .max)
    }
}

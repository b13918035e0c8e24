import Foundation
import SpotCore

// What both catalog backends keep of resumable uploads, and the rules deciding on them, so
// that the SQLite and PostgreSQL catalogs agree. Column names are the property names.

/// A row of `uploadSessions` (`upload_sessions`): a resumable upload in progress, without
/// its chunks. `spotId` is the path's top folder, so a spot's sessions are one index range.
package struct UploadSessionRecord: Codable, Equatable, Sendable {
    package var id: String
    package var bucket: String
    package var name: String
    package var spotId: String?
    package var owner: String
    package var declaredSize: Int64?
    package var maxObjects: Int?
    package var requiresOwnership: Bool
    package var terms: String
    package var createdAt: Date
    package var expiresAt: Date

    package init(
        id: String, bucket: String, name: String, spotId: String?, owner: String, declaredSize: Int64?, maxObjects: Int?,
        requiresOwnership: Bool, terms: String, createdAt: Date, expiresAt: Date
    ) {
        self.id = id
        self.bucket = bucket
        self.name = name
        self.spotId = spotId
        self.owner = owner
        self.declaredSize = declaredSize
        self.maxObjects = maxObjects
        self.requiresOwnership = requiresOwnership
        self.terms = terms
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// The row of `session` (its chunks are rows of their own).
    package init(_ session: UploadSession) {
        self.init(
            id: session.id, bucket: session.path.bucket, name: session.path.name, spotId: session.path.topFolder,
            owner: session.owner, declaredSize: session.declaredSize, maxObjects: session.admission.maxObjects,
            requiresOwnership: session.admission.requiresOwnership, terms: session.terms, createdAt: session.createdAt,
            expiresAt: session.expiresAt)
    }

    /// The domain value with `chunks` (in offset order).
    package func session(chunks: [UploadChunk]) throws -> UploadSession {
        UploadSession(
            id: id, path: try storedPath(bucket: bucket, name: name), owner: owner, declaredSize: declaredSize,
            admission: SpotAdmission(maxObjects: maxObjects, requiresOwnership: requiresOwnership), terms: terms,
            chunks: chunks, createdAt: createdAt, expiresAt: expiresAt)
    }
}

/// A row of `finishedUploads` (`finished_uploads`): an upload session a commit completed,
/// kept until forgotten (`Catalog.forgetFinishedUploads(finishedBefore:)`).
package struct FinishedUploadRecord: Codable, Equatable, Sendable {
    package var id: String
    package var owner: String
    package var bucket: String
    package var name: String
    package var generation: Int64
    package var size: Int64
    package var finishedAt: Date

    package init(id: String, owner: String, bucket: String, name: String, generation: Int64, size: Int64, finishedAt: Date) {
        self.id = id
        self.owner = owner
        self.bucket = bucket
        self.name = name
        self.generation = generation
        self.size = size
        self.finishedAt = finishedAt
    }

    /// The row recording that session `id`, started by `owner`, ended in `object`'s commit at `now`.
    package init(session id: String, owner: String, committed object: NewObject, at now: Date) {
        self.init(
            id: id, owner: owner, bucket: object.path.bucket, name: object.path.name, generation: object.generation,
            size: object.size, finishedAt: now)
    }

    /// The domain value.
    package func finishedUpload() throws -> FinishedUpload {
        FinishedUpload(
            id: id, owner: owner, path: try storedPath(bucket: bucket, name: name), generation: generation, size: size,
            finishedAt: finishedAt)
    }
}

extension UploadSession {
    /// Whether the session expired before `date` (one expiring at `date` has not yet).
    package func expired(before date: Date) -> Bool {
        expiresAt < date
    }

    /// Throws why `chunk` cannot come next at `now`: `.notFound` when the session expired
    /// before `now` (it is as good as swept), `.conflict` when the chunk does not start at
    /// `received` (another request got there first), `.tooLarge` when it ends past
    /// `declaredSize`.
    package func checkAppending(_ chunk: UploadChunk, at now: Date) throws(SpotError) {
        guard !expired(before: now) else { throw SpotError.noUploadSession }
        guard chunk.offset == received else {
            throw SpotError(
                .conflict, "the upload has received \(received) bytes, so the next chunk must start at offset \(received), not \(chunk.offset)")
        }
        if let declaredSize, chunk.offset + chunk.size > declaredSize {
            throw SpotError(
                .tooLarge, "the chunk ends at byte \(chunk.offset + chunk.size), past the \(declaredSize) bytes declared for the upload")
        }
    }

    /// Throws `.conflict` when `size` cannot be the upload's declared size: another size
    /// was declared, or more bytes were received already.
    package func checkDeclaring(_ size: Int64) throws(SpotError) {
        if let declaredSize, declaredSize != size {
            throw SpotError(.conflict, "the upload was declared to be \(declaredSize) bytes, not \(size)")
        }
        guard size >= received else {
            throw SpotError(.conflict, "the upload has received \(received) bytes already, more than the \(size) declared")
        }
    }
}

extension SpotError {
    /// There is no upload session of that id (it never started, completed, was cancelled or
    /// swept). The id is a secret of its URL: messages never name it.
    package static var noUploadSession: SpotError {
        SpotError(.notFound, "the upload session does not exist: it expired, was cancelled or completed")
    }

    /// The upload session a commit completes is gone.
    package static var uploadSessionGone: SpotError {
        SpotError(.notFound, "the upload session expired or was cancelled; start the upload again")
    }

    /// `owner` has `limit` unfinished upload sessions already, the most one user may have open.
    package static func tooManyOpenUploads(limit: Int) -> SpotError {
        SpotError(
            .rateLimited,
            "you have \(limit) unfinished resumable uploads, the most one user may have open; finish or cancel one (DELETE its upload URL) or wait until one expires, then start this one again")
    }

    /// An upload session with that id exists already.
    package static var uploadSessionExists: SpotError {
        SpotError(.conflict, "an upload session with that id exists already")
    }
}

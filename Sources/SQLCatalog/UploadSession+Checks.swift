import Foundation
import SpotCore

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

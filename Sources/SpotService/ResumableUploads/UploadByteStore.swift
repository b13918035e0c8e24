import Foundation
import SpotCore

/// Where upload sessions keep their bytes until they finish: `UploadSessionFiles` (one file
/// each, beside file-system blobs) or `UploadChunkBlobs` (each chunk a blob, as with an
/// object store); the service's configuration picks one (`StorageService.init`).
/// `ResumableUploads` keeps the sessions; a store keeps their bytes and records each chunk
/// it stored through `IncomingChunk.record`.
protocol UploadByteStore: Sendable {
    /// Whether the bytes `session` has are here; a session without any may start here.
    func holds(_ session: UploadSession) -> Bool

    /// Stores `chunk` after the bytes of `session` and records it; returns what arrived and
    /// the session with the chunk (`nil` when no bytes arrived: nothing is recorded).
    /// - Throws: what `chunk.receive` and `chunk.record` throw; `.conflict` when the bytes
    ///   cannot be written now (another request is writing them, or the upload is being
    ///   finished); `.internal` when bytes the session has are lost.
    func append(_ chunk: IncomingChunk, to session: UploadSession) async throws -> (ReceivedChunk, UploadSession?)

    /// The `session.received` bytes of `session` as one staged file; with `whole` (their
    /// digests, worked out as they arrived) they are not hashed again. `current` reads the
    /// session again, to check that it still has those bytes.
    /// - Throws: `.internal` when bytes are lost; `.notFound` when the session ended meanwhile.
    func finishedBytes(of session: UploadSession, whole: WholeDigests?, current: () async throws -> UploadSession) async throws -> StagedBlob

    /// Removes what is here of the bytes of `session`, which ended; whatever fails is left for
    /// gc or the sweep.
    func discardBytes(of session: UploadSession) async

    /// Removes bytes of sessions that ended without their removal (a crash between the two);
    /// `hasEnded` says whether the catalog no longer has a session.
    func removeBytesOfEndedSessions(now: Date, hasEnded: (String) async throws -> Bool) async throws
}

/// A chunk on its way into an upload session, as `ResumableUploads` hands it to its byte store.
struct IncomingChunk {
    /// Where in the upload the chunk starts.
    let offset: Int64
    /// The session as the catalog has it now, which must still end at `offset`.
    let current: () async throws -> UploadSession
    /// Writes the chunk's body into `file`, or else a new temp file (its SHA-256 worked out,
    /// to name a blob), within the room that `session` leaves; checks the client's checksum.
    let receive: (_ file: OpenFile?, _ session: UploadSession) async throws -> ReceivedChunk
    /// Records the chunk, stored, in the session in the catalog, releasing `lease`.
    let record: (UploadChunk, _ lease: LeaseID?) async throws -> UploadSession
}

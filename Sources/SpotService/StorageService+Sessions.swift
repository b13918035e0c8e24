import Access
import Foundation
import SpotCore

/// The use cases of resumable uploads: what the policy decides and the upload pipeline
/// stores, with the sessions and their bytes in `ResumableUploads`.
extension StorageService {
    /// Starts a resumable upload of `path`: the policy decides now on the declared size and
    /// type, and the catalog reserves the object's place in its spot until the session is
    /// finished, cancelled or expires.
    /// - Throws: the policy's refusal; `.conflict` when the spot is full (counting other
    ///   sessions); `.tooLarge` when `declaredSize` is over the limit; `.rateLimited` when
    ///   the owner has `maxOpenUploadSessions` unfinished sessions.
    /// - Parameters:
    ///   - id: the session's id when it was announced before (43 base64url characters,
    ///     `Tokens.generate(prefix: "")`); a new one otherwise.
    ///   - clientMetadata: what the client's protocol said about the upload, for
    ///     `clientMetadata(of:)` (tus `Upload-Metadata`); at most 8 KiB.
    public func startUploadSession(
        _ path: ObjectPath, by user: User?, contentType: String?, declaredSize: Int64?, details: UploadDetails = UploadDetails(),
        id: String? = nil, clientMetadata: String? = nil
    ) async throws -> UploadSession {
        if let clientMetadata, clientMetadata.utf8.count > ObjectSettings.maxCustomBytes {
            throw SpotError(.badRequest, "the upload's metadata is over \(ObjectSettings.maxCustomBytes / 1024) KiB")
        }
        try details.settings.validate()
        if let declaredSize, declaredSize < 0 { throw SpotError(.badRequest, "the declared size must not be negative") }
        let claimed = contentType ?? "application/octet-stream"
        try ObjectSettings.validate(field: "contentType", claimed)
        let (_, decide) = try await uploadDecision(
            path, by: user, contentType: claimed, declaredSize: declaredSize, metadata: details.settings.custom)
        var spot: SpotState?
        if let spotID = path.topFolder { spot = try await catalog.spot(bucket: path.bucket, id: spotID) }
        let authorized = try decide(spot)
        let terms = UploadTerms(
            auth: authorized.request.auth, contentType: claimed, limits: authorized.limits, details: details, clientMetadata: clientMetadata)
        return try await uploads.start(
            path, owner: authorized.owner, declaredSize: declaredSize, admission: authorized.admission, terms: terms, id: id)
    }

    /// Session `id` for a client asking where to go on after a dropped connection: once the
    /// bytes that connection brought are stored, when this process was receiving them (it
    /// waits up to `ResumableUploads.settleTime` for that request to end, so the answer does
    /// not send the client back to an older offset).
    /// - Throws: as `uploadSession(_:by:)` for a session neither active nor finished.
    public func resumptionPoint(of id: String, by user: User?) async throws -> UploadProgress {
        try await uploads.resumptionPoint(of: id, by: user)
    }

    /// Where session `id` uploads to, or uploaded to once finished.
    /// - Throws: as `resumptionPoint(of:by:)`.
    public func uploadTarget(of id: String, by user: User?) async throws -> ObjectPath {
        switch try await uploads.progress(of: id, by: user) {
        case .active(let session): session.path
        case .finished(let finished): finished.path
        }
    }

    /// Session `id` as it is now.
    /// - Throws: `.notFound` when it finished, was cancelled or expired; `.forbidden` when
    ///   `user` is signed in as someone other than its owner.
    public func uploadSession(_ id: String, by user: User?) async throws -> UploadSession {
        try await uploads.session(id, by: user)
    }

    /// Appends `body` to session `id` at `offset`, stored as one chunk, and returns the session.
    /// When the body breaks off (the connection dropped, or fewer than `length` bytes came),
    /// the bytes that arrived are kept, so the client resumes from where they end.
    /// - Parameters:
    ///   - length: the Content-Length, if any.
    ///   - checksum: the digest the client says the chunk has (tus `checksum`); then a chunk
    ///     cut short is not kept, since it cannot be checked.
    /// - Throws: `UploadOffsetMismatch` when `offset` is not where the session is;
    ///   `ChunkChecksumMismatch`; `.tooLarge` for bytes past the declared size or the limit;
    ///   `.badRequest` when the body ended early; errors of `uploadSession(_:by:)`.
    public func appendToUploadSession<Body: AsyncSequence>(
        _ id: String, at offset: Int64, by user: User?, length: Int64? = nil, checksum: ChunkChecksum? = nil, body: Body
    ) async throws -> UploadSession where Body.Element: Collection, Body.Element.Element == UInt8 {
        try await uploads.append(id, at: offset, by: user, length: length, checksum: checksum, body: body)
    }

    /// Sets the total size of session `id` once the client knows it (the last chunk).
    /// - Throws: `.conflict` when another size was declared or more bytes arrived;
    ///   `.tooLarge` over the limit.
    public func declareSize(_ size: Int64, ofUploadSession id: String, by user: User?) async throws -> UploadSession {
        try await uploads.declareSize(size, ofSession: id, by: user)
    }

    /// Finishes session `id`: its bytes go through the same steps as a one-shot upload
    /// (sniffed, decided on again by the policy, analysed, stored) and are committed
    /// with the session removed in the same transaction.
    /// A session without a declared size ends at what it received.
    /// - Throws: `UploadOffsetMismatch` when the client's `offset` (its idea of the end) is
    ///   not what the session received; `.conflict` when fewer bytes than declared arrived;
    ///   any refusal of the finished bytes (`refusalsOfFinishedBytes` end the session; after
    ///   others, such as `.unavailable`, the client may try again).
    public func finishUploadSession(_ id: String, at offset: Int64? = nil, by user: User?) async throws -> StoredObject {
        // A client asking where the session is waits for this, as for an append.
        try await uploads.storing(id) {
            var session: UploadSession
            switch try await uploads.progress(of: id, by: user) {
            case .active(let active):
                session = active
            case .finished(let finished):
                // Finishing again (the answer was lost) answers the object stored.
                guard let object = try await uploads.object(storedBy: finished) else { throw ResumableUploads.noSuchSession }
                return object
            }
            if let offset, offset != session.received { throw UploadOffsetMismatch(expected: session.received, session: session) }
            if session.declaredSize == nil { session = try await uploads.declareSize(session.received, ofSession: id, by: user) }
            if let declared = session.declaredSize, declared != session.received {
                throw SpotError(.conflict, "the upload session holds \(session.received) of the \(declared) bytes declared; send the rest from offset \(session.received)")
            }
            let terms = try ResumableUploads.terms(of: session)
            // The rules decide again with the sign-in of the start: it must still stand.
            if !session.owner.isEmpty {
                try await requireStanding(session.owner, since: session.createdAt, as: "the user who started this upload", remedy: "sign in and start again")
            }
            let existing = try await catalog.object(at: session.path)
            let request = AccessRequest(
                auth: terms.auth, operation: existing == nil ? .create : .update, bucket: session.path.bucket, name: session.path.name,
                spot: try await spotState(of: session.path), resource: existing,
                incoming: IncomingObject(size: session.received, contentType: terms.contentType, metadata: terms.details.settings.custom))
            let authorized = AuthorizedUpload(
                path: session.path, owner: session.owner, request: request, limits: terms.limits, admission: session.admission)
            do {
                let staged = try await uploads.finishedBytes(of: session, by: user)
                let object = try await complete(staged, authorized, details: terms.details, session: id).object
                await uploads.discardBytes(of: session)
                return object
            } catch let missing as SpotError where missing.kind == .notFound {
                // Another request finished it first (on this instance or another).
                guard let object = try await uploads.object(storedBySession: id) else { throw missing }
                return object
            } catch let refusal as SpotError where Self.refusalsOfFinishedBytes.contains(refusal.kind) {
                // These bytes can never be stored: the session ends now rather than hold its place.
                try await uploads.end(id)
                throw refusal
            }
        }
    }

    /// What the policy and the image checks answer about bytes that will never be stored.
    static let refusalsOfFinishedBytes: Set<SpotError.Kind> = [.forbidden, .unsupportedMediaType, .invalidContent, .tooLarge, .badRequest]

    /// Cancels session `id`: its place in the spot is freed and its bytes removed.
    public func cancelUploadSession(_ id: String, by user: User?) async throws {
        _ = try await uploads.session(id, by: user)
        try await uploads.end(id)
    }

    /// Removes the sessions that expired by now with their bytes, and forgets the finished
    /// ones older than `uploadExpiry`; returns how many sessions were removed.
    @discardableResult
    public func sweepExpiredUploads() async throws -> Int {
        try await uploads.sweepExpired()
    }

    /// What the client's protocol said about session `session` when it started, if anything.
    public func clientMetadata(of session: UploadSession) throws -> String? {
        try ResumableUploads.terms(of: session).clientMetadata
    }
}

import Access
import Foundation
import NIOCore
import SpotCore
import Synchronization

/// The decision taken when an upload session started, kept with it in the catalog
/// (`UploadSession.terms`) so that any instance can finish it the same way.
struct UploadTerms: Codable {
    /// Who started the session, as the rules saw them.
    var auth: Auth?
    /// The client's claim of the content type.
    var contentType: String
    var limits: UploadLimits
    var details: UploadDetails
    /// What the client's protocol said about the upload, given back as it was (tus `Upload-Metadata`).
    var clientMetadata: String?
}

/// A chunk sent at an offset other than the one the server holds (a retry, or bytes the
/// server never got): the client must go on from `expected`.
public struct UploadOffsetMismatch: Error, Sendable {
    public let expected: Int64
    public let session: UploadSession
}

/// Where an upload is, for a client asking after a dropped connection or a lost answer.
public enum UploadProgress: Sendable {
    /// Still receiving bytes.
    case active(UploadSession)
    /// Complete: a commit stored its object.
    case finished(FinishedUpload)
}

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
        let now = configuration.now()
        let session = UploadSession(
            id: id ?? Tokens.generate(prefix: ""), path: path, owner: authorized.owner, declaredSize: declaredSize,
            admission: authorized.admission, terms: String(decoding: try JSONEncoder().encode(terms), as: UTF8.self),
            createdAt: now, expiresAt: now.addingTimeInterval(configuration.uploadExpiry))
        try await catalog.startUpload(session, now: now, openLimit: configuration.maxOpenUploadSessions)
        return session
    }

    /// Session `id` for a client asking where to go on after a dropped connection: once the
    /// bytes that connection brought are stored, when this process was receiving them (it
    /// waits up to `settleTime` for that request to end, so the answer does not send the
    /// client back to an older offset).
    /// - Throws: as `progress(of:by:)`.
    public func resumptionPoint(of id: String, by user: User?) async throws -> UploadProgress {
        await appendsInFlight.waitUntilNone(for: id, atMost: Self.settleTime)
        return try await progress(of: id, by: user)
    }

    /// Where session `id` uploads to, or uploaded to once finished.
    /// - Throws: as `progress(of:by:)`.
    public func uploadTarget(of id: String, by user: User?) async throws -> ObjectPath {
        switch try await progress(of: id, by: user) {
        case .active(let session): session.path
        case .finished(let finished): finished.path
        }
    }

    /// Session `id` as it is now: still receiving, or completed by a commit (for a while,
    /// `uploadExpiry`).
    /// - Throws: as `uploadSession(_:by:)` when it is neither.
    private func progress(of id: String, by user: User?) async throws -> UploadProgress {
        do {
            return .active(try await uploadSession(id, by: user))
        } catch let missing as SpotError where missing.kind == .notFound {
            guard let finished = try await catalog.finishedUpload(id) else { throw missing }
            try Self.check(user, mayUse: finished.owner)
            return .finished(finished)
        }
    }

    /// The object `finished` stored, while it is still that object (not replaced or deleted
    /// since), or `nil`.
    private func object(storedBy finished: FinishedUpload) async throws -> StoredObject? {
        guard let object = try await catalog.object(at: finished.path), object.generation == finished.generation else { return nil }
        return object
    }

    /// The session's id is the capability (as with Firebase's upload URLs): a request without
    /// a token may go on with it; one signed in as someone other than `owner` may not.
    private static func check(_ user: User?, mayUse owner: String) throws(SpotError) {
        if let user, user.uid != owner { throw SpotError(.forbidden, "this upload session belongs to another user") }
    }

    /// Why a client cannot go on with a session that is not there.
    private static let noSuchSession = SpotError(
        .notFound, "there is no such upload session: it finished, was cancelled or expired; start the upload again")

    /// The most chunks one upload session may have (each is a catalog row, and a blob where
    /// chunks are blobs).
    static let maxChunks = 10_000

    /// How long `resumptionPoint(of:by:)` waits for a request still storing bytes of the session.
    static let settleTime: Duration = .seconds(3)

    /// Session `id` as it is now.
    /// - Throws: `.notFound` when it finished, was cancelled or expired; `.forbidden` when
    ///   `user` is signed in as someone other than its owner.
    public func uploadSession(_ id: String, by user: User?) async throws -> UploadSession {
        // An expired session is gone for clients at once, before the sweeper removes it.
        guard let session = try await catalog.uploadSession(id), session.expiresAt > configuration.now() else { throw Self.noSuchSession }
        try Self.check(user, mayUse: session.owner)
        return session
    }

    /// Session `id` as it is now, which must end at `offset`.
    /// - Throws: `UploadOffsetMismatch` when it ends elsewhere; as `uploadSession(_:by:)`.
    func uploadSession(_ id: String, at offset: Int64, by user: User?) async throws -> UploadSession {
        let session = try await uploadSession(id, by: user)
        guard session.received == offset else { throw UploadOffsetMismatch(expected: session.received, session: session) }
        return session
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
        appendsInFlight.begin(id)
        defer { appendsInFlight.end(id) }
        let session = try await uploadSession(id, at: offset, by: user)
        guard session.chunks.count < Self.maxChunks else {
            throw SpotError(.badRequest, "the upload already arrived in \(Self.maxChunks) pieces, the most one may have; send larger chunks, or start again")
        }
        let terms = try Self.terms(of: session)
        // The digests of the whole upload go on from the last chunk when this process received
        // it; without them, finishing reads the chunks back to hash them.
        let whole = offset == 0 ? WholeDigests() : runningDigests.take(id, at: offset)
        /// Receives the chunk into `file` or else a temp file, within what `session` (as read
        /// last) still has room for.
        let receive = { (file: OpenFile?, session: UploadSession) in
            let bound = min(terms.limits.maxBytes, session.declaredSize ?? .max)
            do {
                return try await self.receiveChunk(body, room: bound - offset, length: length, checksum: checksum, continuing: whole, into: file)
            } catch let error as SpotError where error.kind == .tooLarge {
                let limit = session.declaredSize.map { "the declared size of \($0) bytes" } ?? "the limit of \(UploadLimits.describe(bytes: terms.limits.maxBytes)) for this path"
                throw SpotError(.tooLarge, "bytes past \(limit) were sent to the upload session; nothing of this request was kept")
            }
        }
        let chunk: ReceivedChunk, appended: UploadSession?
        if let sessionFiles = try sessionFiles(holding: session) {
            (chunk, appended) = try await sessionFiles.append(to: id, at: offset) {
                try await uploadSession(id, at: offset, by: user)
            } write: { file, current in
                let chunk = try await receive(file, current)
                guard chunk.written.size > 0 else { return (chunk, nil) }
                try await sessionFiles.sync(file, madeNow: offset == 0)
                let stored = UploadChunk(offset: offset, size: chunk.written.size, digest: nil)
                return (chunk, try await addChunk(stored, to: id, lease: nil, by: user))
            }
        } else {
            chunk = try await receive(nil, session)
            defer { try? FileManager.default.removeItem(atPath: chunk.written.path) }
            if chunk.written.size > 0, let digest = chunk.written.digest {
                appended = try await storeAsBlob(fileAt: chunk.written.path, as: digest, at: offset, size: chunk.written.size, to: id, by: user)
            } else {
                appended = nil
            }
        }
        if let continued = chunk.whole { runningDigests.keep(continued, for: id) }
        let held = appended ?? session
        guard chunk.complete else {
            throw chunk.interruption ?? SpotError(.badRequest, "the body ended after \(chunk.written.size) of its \(length ?? 0) bytes; the upload holds \(held.received): go on from there")
        }
        return held
    }

    /// Sets the total size of session `id` once the client knows it (the last chunk).
    /// - Throws: `.conflict` when another size was declared or more bytes arrived;
    ///   `.tooLarge` over the limit.
    public func declareSize(_ size: Int64, ofUploadSession id: String, by user: User?) async throws -> UploadSession {
        let session = try await uploadSession(id, by: user)
        if session.declaredSize == size { return session }
        let terms = try Self.terms(of: session)
        guard size <= terms.limits.maxBytes else {
            throw SpotError(.tooLarge, "the upload is \(size) bytes; the limit for this path is \(UploadLimits.describe(bytes: terms.limits.maxBytes))")
        }
        guard let updated = try await catalog.declareSize(size, of: id) else { return try await uploadSession(id, by: user) }
        return updated
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
        appendsInFlight.begin(id)
        defer { appendsInFlight.end(id) }
        var session: UploadSession
        switch try await progress(of: id, by: user) {
        case .active(let active):
            session = active
        case .finished(let finished):
            // Finishing again (the answer was lost) answers the object stored.
            guard let object = try await object(storedBy: finished) else { throw Self.noSuchSession }
            return object
        }
        if let offset, offset != session.received { throw UploadOffsetMismatch(expected: session.received, session: session) }
        if session.declaredSize == nil { session = try await declareSize(session.received, ofUploadSession: id, by: user) }
        if let declared = session.declaredSize, declared != session.received {
            throw SpotError(.conflict, "the upload session holds \(session.received) of the \(declared) bytes declared; send the rest from offset \(session.received)")
        }
        let terms = try Self.terms(of: session)
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
            let staged = try await finishedBytes(of: session, by: user)
            let object = try await complete(staged, authorized, details: terms.details, session: id)
            await discardBytes(of: session)
            return object
        } catch let missing as SpotError where missing.kind == .notFound {
            // Another request finished it first (on this instance or another).
            guard let finished = try await catalog.finishedUpload(id), let object = try await object(storedBy: finished) else { throw missing }
            return object
        } catch let refusal as SpotError where Self.refusalsOfFinishedBytes.contains(refusal.kind) {
            // These bytes can never be stored: the session ends now rather than hold its place.
            if let ended = try await catalog.endUpload(id, expiredBefore: nil) { await discardBytes(of: ended) }
            throw refusal
        }
    }

    /// What the policy and the image checks answer about bytes that will never be stored.
    static let refusalsOfFinishedBytes: Set<SpotError.Kind> = [.forbidden, .unsupportedMediaType, .invalidContent, .tooLarge, .badRequest]

    /// Cancels session `id`: its place in the spot is freed and its bytes removed.
    public func cancelUploadSession(_ id: String, by user: User?) async throws {
        _ = try await uploadSession(id, by: user)
        if let ended = try await catalog.endUpload(id, expiredBefore: nil) { await discardBytes(of: ended) }
    }

    /// Removes the sessions that expired by now with their bytes, and forgets the finished
    /// ones older than `uploadExpiry`; returns how many sessions were removed.
    @discardableResult
    public func sweepExpiredUploads() async throws -> Int {
        var swept = 0
        let now = configuration.now()
        var seen: Set<String> = []
        while true {
            let expired = try await catalog.expiredUploads(before: now, limit: 100).filter { !seen.contains($0.id) }
            for session in expired {
                seen.insert(session.id)
                // Only if no chunk extended it since it was listed.
                if let ended = try await catalog.endUpload(session.id, expiredBefore: now) {
                    await discardBytes(of: ended)
                    swept += 1
                }
            }
            if expired.isEmpty {
                _ = try await catalog.forgetFinishedUploads(finishedBefore: now.addingTimeInterval(-configuration.uploadExpiry))
                try await removeFilesOfEndedSessions(now: now)
                return swept
            }
        }
    }

    /// What the client's protocol said about session `session` when it started, if anything.
    public func clientMetadata(of session: UploadSession) throws -> String? {
        try Self.terms(of: session).clientMetadata
    }

    private static func terms(of session: UploadSession) throws -> UploadTerms {
        do {
            return try JSONDecoder().decode(UploadTerms.self, from: Data(session.terms.utf8))
        } catch {
            throw SpotError(.internal, "upload session \(session.id) has unreadable terms: \(error)")
        }
    }
}

/// The upload sessions this process is appending to or finishing, so that a client asking
/// where a session is after a dropped connection is answered once that connection's bytes
/// are stored.
final class AppendsInFlight: Sendable {
    private struct Session {
        var running = 0
        var waiting: [(token: UUID, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let sessions = Mutex<[String: Session]>([:])

    func begin(_ id: String) {
        sessions.withLock { $0[id, default: Session()].running += 1 }
    }

    func end(_ id: String) {
        let waiting = sessions.withLock { sessions -> [CheckedContinuation<Void, Never>] in
            sessions[id]?.running -= 1
            guard let session = sessions[id], session.running == 0 else { return [] }
            sessions[id] = nil
            return session.waiting.map(\.continuation)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns when no append to `id` runs in this process, or after `limit`.
    func waitUntilNone(for id: String, atMost limit: Duration) async {
        let token = UUID()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let idle = self.sessions.withLock { sessions -> Bool in
                        guard sessions[id] != nil else { return true }
                        sessions[id]!.waiting.append((token, continuation))
                        return false
                    }
                    if idle { continuation.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)  // ends early when the wait ended first
                let waiter = self.sessions.withLock { sessions -> CheckedContinuation<Void, Never>? in
                    guard let index = sessions[id]?.waiting.firstIndex(where: { $0.token == token }) else { return nil }
                    return sessions[id]!.waiting.remove(at: index).continuation
                }
                waiter?.resume()
            }
            await group.next()
            group.cancelAll()
        }
    }
}

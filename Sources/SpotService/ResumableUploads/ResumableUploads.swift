import Access
import Foundation
import SpotCore

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

/// Resumable uploads: their sessions, kept in the catalog so that any instance goes on with
/// one, and the sessions' bytes until they finish, in an `UploadByteStore`. What the policy
/// decides at the start and at the finish, and storing the finished bytes as an object, are
/// `StorageService`'s (`StorageService+Sessions.swift`).
struct ResumableUploads: Sendable {
    let catalog: any Catalog
    let configuration: ServiceConfiguration
    let writer: BlobWriter
    /// Where sessions keep their bytes: a new session in the first store; each session goes
    /// on in the first that holds the bytes it has.
    let byteStores: [any UploadByteStore]
    let appendsInFlight = AppendsInFlight()
    let runningDigests = RunningDigests()

    /// The most chunks one upload session may have (each is a catalog row, and a blob where
    /// chunks are blobs).
    static let maxChunks = 10_000

    /// How long `resumptionPoint(of:by:)` waits for a request still storing bytes of the session.
    static let settleTime: Duration = .seconds(3)

    /// Why a client cannot go on with a session that is not there.
    static let noSuchSession = SpotError(
        .notFound, "there is no such upload session: it finished, was cancelled or expired; start the upload again")

    /// Records a new session of `path` on the terms the policy decided (see
    /// `StorageService.startUploadSession`).
    /// - Throws: `.rateLimited` when `owner` has `maxOpenUploadSessions` unfinished sessions;
    ///   `.conflict` when the spot is full.
    func start(
        _ path: ObjectPath, owner: String, declaredSize: Int64?, admission: SpotAdmission, terms: UploadTerms, id: String?
    ) async throws -> UploadSession {
        let now = configuration.now()
        let session = UploadSession(
            id: id ?? Tokens.generate(prefix: ""), path: path, owner: owner, declaredSize: declaredSize,
            admission: admission, terms: String(decoding: try JSONEncoder().encode(terms), as: UTF8.self),
            createdAt: now, expiresAt: now.addingTimeInterval(configuration.uploadExpiry))
        try await catalog.startUpload(session, now: now, openLimit: configuration.maxOpenUploadSessions)
        return session
    }

    /// See `StorageService.resumptionPoint(of:by:)`.
    func resumptionPoint(of id: String, by user: User?) async throws -> UploadProgress {
        await appendsInFlight.waitUntilNone(for: id, atMost: Self.settleTime)
        return try await progress(of: id, by: user)
    }

    /// Session `id` as it is now: still receiving, or completed by a commit (for a while,
    /// `uploadExpiry`).
    /// - Throws: as `session(_:by:)` when it is neither.
    func progress(of id: String, by user: User?) async throws -> UploadProgress {
        do {
            return .active(try await session(id, by: user))
        } catch let missing as SpotError where missing.kind == .notFound {
            guard let finished = try await catalog.finishedUpload(id) else { throw missing }
            try Self.check(user, mayUse: finished.owner)
            return .finished(finished)
        }
    }

    /// The object `finished` stored, while it is still that object (not replaced or deleted
    /// since), or `nil`.
    func object(storedBy finished: FinishedUpload) async throws -> StoredObject? {
        guard let object = try await catalog.object(at: finished.path), object.generation == finished.generation else { return nil }
        return object
    }

    /// The object session `id` stored, once a commit completed it and while it is still that
    /// object, or `nil`.
    func object(storedBySession id: String) async throws -> StoredObject? {
        guard let finished = try await catalog.finishedUpload(id) else { return nil }
        return try await object(storedBy: finished)
    }

    /// The session's id is the capability (as with Firebase's upload URLs): a request without
    /// a token may go on with it; one signed in as someone other than `owner` may not.
    private static func check(_ user: User?, mayUse owner: String) throws(SpotError) {
        if let user, user.uid != owner { throw SpotError(.forbidden, "this upload session belongs to another user") }
    }

    /// See `StorageService.uploadSession(_:by:)`.
    func session(_ id: String, by user: User?) async throws -> UploadSession {
        // An expired session is gone for clients at once, before the sweeper removes it.
        guard let session = try await catalog.uploadSession(id), session.expiresAt > configuration.now() else { throw Self.noSuchSession }
        try Self.check(user, mayUse: session.owner)
        return session
    }

    /// Session `id` as it is now, which must end at `offset`.
    /// - Throws: `UploadOffsetMismatch` when it ends elsewhere; as `session(_:by:)`.
    func session(_ id: String, at offset: Int64, by user: User?) async throws -> UploadSession {
        let session = try await self.session(id, by: user)
        guard session.received == offset else { throw UploadOffsetMismatch(expected: session.received, session: session) }
        return session
    }

    /// See `StorageService.declareSize(_:ofUploadSession:by:)`.
    func declareSize(_ size: Int64, ofSession id: String, by user: User?) async throws -> UploadSession {
        let session = try await self.session(id, by: user)
        if session.declaredSize == size { return session }
        let terms = try Self.terms(of: session)
        guard size <= terms.limits.maxBytes else {
            throw SpotError(.tooLarge, "the upload is \(size) bytes; the limit for this path is \(UploadLimits.describe(bytes: terms.limits.maxBytes))")
        }
        guard let updated = try await catalog.declareSize(size, of: id) else { return try await self.session(id, by: user) }
        return updated
    }

    /// Runs `work`, which stores bytes of session `id`, counted so that `resumptionPoint` waits for it.
    func storing<Result>(_ id: String, _ work: () async throws -> Result) async throws -> Result {
        appendsInFlight.begin(id)
        defer { appendsInFlight.end(id) }
        return try await work()
    }

    /// The store holding the bytes `session` has; for a new session, the first.
    /// - Throws: `.conflict` when none does (its bytes are in a file where this service keeps
    ///   none: it started on the store's own disk, which serves blobs from S3 now).
    func byteStore(holding session: UploadSession) throws -> any UploadByteStore {
        guard let store = byteStores.first(where: { $0.holds(session) }) else {
            throw SpotError(.conflict, "this upload's bytes are on the disk of the store it started on, not in this blob store; start the upload again")
        }
        return store
    }

    /// The bytes of `session`, complete, as one staged file with their digests (those carried
    /// from chunk to chunk when this process received them all).
    func finishedBytes(of session: UploadSession, by user: User?) async throws -> StagedBlob {
        let whole = runningDigests.take(session.id, at: session.received)
        return try await byteStore(holding: session).finishedBytes(of: session, whole: whole) {
            try await self.session(session.id, at: session.received, by: user)
        }
    }

    /// Removes the bytes of `session`, which ended, wherever they are; whatever fails here is
    /// left for gc or the sweep.
    func discardBytes(of session: UploadSession) async {
        for store in byteStores { await store.discardBytes(of: session) }
    }

    /// Ends session `id` now, freeing its place in its spot, and removes its bytes.
    func end(_ id: String) async throws {
        if let ended = try await catalog.endUpload(id, expiredBefore: nil) { await discardBytes(of: ended) }
    }

    /// See `StorageService.sweepExpiredUploads()`.
    func sweepExpired() async throws -> Int {
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
                for store in byteStores {
                    // A session, once gone, never comes back.
                    try await store.removeBytesOfEndedSessions(now: now) { try await catalog.uploadSession($0) == nil }
                }
                return swept
            }
        }
    }

    static func terms(of session: UploadSession) throws -> UploadTerms {
        do {
            return try JSONDecoder().decode(UploadTerms.self, from: Data(session.terms.utf8))
        } catch {
            throw SpotError(.internal, "upload session \(session.id) has unreadable terms: \(error)")
        }
    }
}

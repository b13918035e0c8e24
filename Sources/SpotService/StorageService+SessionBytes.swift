import Foundation
import NIOCore
import SpotCore
import Synchronization

/// A chunk whose bytes do not have the digest the client gave; nothing of it was kept.
public struct ChunkChecksumMismatch: Error, Sendable {}

/// The digest a client says a chunk has (tus `checksum`: `Upload-Checksum: sha1 <base64>`).
public struct ChunkChecksum: Sendable {
    /// The algorithms checked, each worked out while the chunk is staged (SHA-1 is tus
    /// clients' usual default).
    public static let algorithms = ["sha1", "sha256", "md5"]

    public let algorithm: String
    public let digest: [UInt8]

    /// `nil` for an algorithm not in `algorithms`.
    public init?(algorithm: String, digest: [UInt8]) {
        guard Self.algorithms.contains(algorithm) else { return nil }
        self.algorithm = algorithm
        self.digest = digest
    }

    /// Whether `written` (written with `writeChunk(…, checksum: algorithm)`) has this digest.
    func matches(_ written: WrittenChunk) -> Bool {
        switch algorithm {
        case "sha256": written.digest?.bytes == digest
        case "md5": written.md5 == digest
        default: written.sha1 == digest
        }
    }
}

/// Where upload sessions keep their bytes: each chunk received, written to the session's
/// file (`UploadSessionFiles`) or stored as a blob, and put together when the session finishes.
extension StorageService {
    /// A chunk's bytes as they were received.
    struct ReceivedChunk {
        let written: WrittenChunk
        /// Whether all the bytes the client sent arrived.
        let complete: Bool
        let interruption: (any Error)?
        /// The digests of the whole upload, gone on with this chunk.
        let whole: WholeDigests?
    }

    /// Writes `body`, a chunk, to `file` or else a temp file (at most `room` bytes), and
    /// checks it against the client's `checksum`.
    /// - Throws: `ChunkChecksumMismatch`; the body's error when it was cut short and has a checksum.
    func receiveChunk<Body: AsyncSequence>(
        _ body: Body, room: Int64, length: Int64?, checksum: ChunkChecksum?, continuing whole: WholeDigests?, into file: OpenFile?
    ) async throws -> ReceivedChunk where Body.Element: Collection, Body.Element.Element == UInt8 {
        let (written, interruption, continued) = try await writer.writeChunk(
            body, maxBytes: room, continuing: whole, checksum: checksum?.algorithm, namingBlob: file == nil, into: file)
        let complete = interruption == nil && (length.map { written.size == $0 } ?? true)
        if let checksum {
            let unchecked = { if file == nil { try? FileManager.default.removeItem(atPath: written.path) } }
            guard complete else {
                unchecked()
                throw interruption ?? SpotError(.badRequest, "the chunk ended early; nothing of it was kept")
            }
            guard checksum.matches(written) else {
                unchecked()
                throw ChunkChecksumMismatch()
            }
        }
        return ReceivedChunk(written: written, complete: complete, interruption: interruption, whole: continued)
    }

    /// `sessionFiles`, unless `session`'s chunks are blobs (it started where sessions keep
    /// their bytes so, or before they were kept in files): then it goes on that way.
    /// - Throws: `.conflict` for a session whose bytes are in a file where this service keeps
    ///   none (it started on the store's own disk, which serves blobs from S3 now).
    func sessionFiles(holding session: UploadSession) throws -> UploadSessionFiles? {
        if session.chunks.contains(where: { $0.digest != nil }) { return nil }
        if sessionFiles == nil, !session.chunks.isEmpty {
            throw SpotError(.conflict, "this upload's bytes are on the disk of the store it started on, not in this blob store; start the upload again")
        }
        return sessionFiles
    }

    /// Adds `chunk`, stored, to session `id`, releasing `lease`.
    /// - Throws: `UploadOffsetMismatch` when another request added a chunk there first.
    func addChunk(_ chunk: UploadChunk, to id: String, lease: LeaseID?, by user: User?) async throws -> UploadSession {
        do {
            let now = configuration.now()
            return try await catalog.appendChunk(chunk, to: id, lease: lease, now: now, expiresAt: now.addingTimeInterval(configuration.uploadExpiry))
        } catch let error as SpotError where error.kind == .conflict {
            let now = try await uploadSession(id, by: user)
            throw UploadOffsetMismatch(expected: now.received, session: now)
        }
    }

    /// Stores the file at `path` as blob `digest` and adds it to session `id` as its chunk at `offset`.
    func storeAsBlob(fileAt path: String, as digest: SpotCore.Digest, at offset: Int64, size: Int64, to id: String, by user: User?) async throws -> UploadSession {
        let lease = try await leaseBlobs([digest])
        do {
            try await blobs.store(fileAt: path, as: digest)
            return try await addChunk(UploadChunk(offset: offset, size: size, digest: digest), to: id, lease: lease, by: user)
        } catch {
            try? await catalog.releaseLease(lease)
            throw error
        }
    }

    /// The bytes of `session`, complete, as one staged file with their digests (those carried
    /// from chunk to chunk when this process received them all): its file linked, or its
    /// chunks' blobs written out.
    func finishedBytes(of session: UploadSession, by user: User?) async throws -> StagedBlob {
        let whole = runningDigests.take(session.id, at: session.received)
        guard let sessionFiles = try sessionFiles(holding: session) else {
            let bytes = SessionBytes(blobs: blobs, chunks: session.chunks)
            if let whole { return try await writer.assemble(bytes, whole: whole) }
            return try await writer.stage(bytes, maxBytes: session.received)
        }
        let path = writer.temporaryPath()
        try await sessionFiles.link(session.id, holding: session.received, at: path) {
            try await uploadSession(session.id, at: session.received, by: user)
        }
        do {
            // Without the digests carried from chunk to chunk, the file is read and hashed.
            let writer = self.writer
            return try await onFileThread { try writer.adopt(fileAt: path, whole: whole) }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
    }

    /// Removes the bytes of `session`, which ended: its file, or the blobs of its chunks that
    /// nothing else names (a chunk may hold the same bytes as an object); whatever fails here
    /// is left for gc or the sweep.
    func discardBytes(of session: UploadSession) async {
        sessionFiles?.remove(session.id)
        for chunk in session.chunks {
            guard let digest = chunk.digest else { continue }
            _ = try? await removeIfUnreferenced(digest, cutoff: .distantPast, now: configuration.now())
        }
    }

    /// Removes the files, unchanged for `UploadSessionFiles.orphanAge` by `now`, of sessions
    /// the catalog no longer has (a crash came between a session's end and its file's
    /// removal). A session, once gone, never comes back.
    func removeFilesOfEndedSessions(now: Date) async throws {
        guard let sessionFiles else { return }
        for id in try sessionFiles.sessionIDs(unchangedSince: now.addingTimeInterval(-UploadSessionFiles.orphanAge))
        where try await catalog.uploadSession(id) == nil {
            sessionFiles.remove(id)
        }
    }
}

/// The digests of the upload sessions this process received the latest chunk of, by
/// session id: at most `capacity`, the oldest forgotten first (their uploads are then hashed
/// again when they finish). Thread-safe.
final class RunningDigests: Sendable {
    static let capacity = 256
    private let kept = Mutex<[(id: String, digests: WholeDigests)]>([])

    /// Keeps `digests` for session `id`, in place of what was kept for it.
    func keep(_ digests: WholeDigests, for id: String) {
        kept.withLock { entries in
            entries.removeAll { $0.id == id }
            entries.append((id, digests))
            if entries.count > Self.capacity { entries.removeFirst() }
        }
    }

    /// Removes and returns the digests of session `id` when they cover exactly `count` bytes.
    func take(_ id: String, at count: Int64) -> WholeDigests? {
        kept.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
            let digests = entries.remove(at: index).digests
            return digests.count == count ? digests : nil
        }
    }
}

/// The bytes of an upload session's chunks in order, read from the blob store.
struct SessionBytes: AsyncSequence {
    typealias Element = ByteBufferView
    let blobs: any BlobStore
    let chunks: [UploadChunk]

    struct AsyncIterator: AsyncIteratorProtocol {
        let blobs: any BlobStore
        var remaining: ArraySlice<UploadChunk>
        var current: BlobByteStream?
        var left: Int64 = 0

        mutating func next() async throws -> ByteBufferView? {
            while true {
                if var stream = current, let buffer = try await stream.next() {
                    current = stream
                    left -= Int64(buffer.readableBytes)
                    return buffer.readableBytesView
                }
                if current != nil, left != 0 {
                    throw SpotError(.internal, "an upload chunk's blob is shorter than the catalog says; the upload must start again")
                }
                guard let chunk = remaining.popFirst() else { return nil }
                guard let digest = chunk.digest, let stream = try await blobs.stream(digest, range: 0..<chunk.size) else {
                    throw SpotError(.internal, "the blob of an upload chunk (\(chunk.digest?.hex ?? "none")) is missing; the upload must start again")
                }
                current = stream
                left = chunk.size
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(blobs: blobs, remaining: chunks[...]) }
}

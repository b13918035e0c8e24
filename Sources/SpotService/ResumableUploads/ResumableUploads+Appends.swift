import Access
import Foundation
import SpotCore

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

/// A chunk's bytes as they were received.
struct ReceivedChunk {
    let written: WrittenChunk
    /// Whether all the bytes the client sent arrived.
    let complete: Bool
    let interruption: (any Error)?
    /// The digests of the whole upload, gone on with this chunk.
    let whole: WholeDigests?
}

extension ResumableUploads {
    /// See `StorageService.appendToUploadSession(_:at:by:length:checksum:body:)`.
    func append<Body: AsyncSequence>(
        _ id: String, at offset: Int64, by user: User?, length: Int64?, checksum: ChunkChecksum?, body: Body
    ) async throws -> UploadSession where Body.Element: Collection, Body.Element.Element == UInt8 {
        try await storing(id) {
            let session = try await self.session(id, at: offset, by: user)
            guard session.chunks.count < Self.maxChunks else {
                throw SpotError(.badRequest, "the upload already arrived in \(Self.maxChunks) pieces, the most one may have; send larger chunks, or start again")
            }
            let terms = try Self.terms(of: session)
            // The digests of the whole upload go on from the last chunk when this process received
            // it; without them, finishing reads the chunks back to hash them.
            let whole = offset == 0 ? WholeDigests() : runningDigests.take(id, at: offset)
            let incoming = IncomingChunk(offset: offset) {
                try await self.session(id, at: offset, by: user)
            } receive: { file, current in
                let bound = min(terms.limits.maxBytes, current.declaredSize ?? .max)
                do {
                    return try await self.receive(body, room: bound - offset, length: length, checksum: checksum, continuing: whole, into: file)
                } catch let error as SpotError where error.kind == .tooLarge {
                    let limit = current.declaredSize.map { "the declared size of \($0) bytes" } ?? "the limit of \(UploadLimits.describe(bytes: terms.limits.maxBytes)) for this path"
                    throw SpotError(.tooLarge, "bytes past \(limit) were sent to the upload session; nothing of this request was kept")
                }
            } record: { chunk, lease in
                try await self.record(chunk, to: id, lease: lease, by: user)
            }
            let (chunk, appended) = try await byteStore(holding: session).append(incoming, to: session)
            if let continued = chunk.whole { runningDigests.keep(continued, for: id) }
            let held = appended ?? session
            guard chunk.complete else {
                throw chunk.interruption ?? SpotError(.badRequest, "the body ended after \(chunk.written.size) of its \(length ?? 0) bytes; the upload holds \(held.received): go on from there")
            }
            return held
        }
    }

    /// Writes `body`, a chunk, to `file` or else a temp file (at most `room` bytes), and
    /// checks it against the client's `checksum`.
    /// - Throws: `ChunkChecksumMismatch`; the body's error when it was cut short and has a checksum.
    private func receive<Body: AsyncSequence>(
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

    /// Adds `chunk`, stored, to session `id`, releasing `lease`.
    /// - Throws: `UploadOffsetMismatch` when another request added a chunk there first.
    private func record(_ chunk: UploadChunk, to id: String, lease: LeaseID?, by user: User?) async throws -> UploadSession {
        do {
            let now = configuration.now()
            return try await catalog.appendChunk(chunk, to: id, lease: lease, now: now, expiresAt: now.addingTimeInterval(configuration.uploadExpiry))
        } catch let error as SpotError where error.kind == .conflict {
            let now = try await session(id, by: user)
            throw UploadOffsetMismatch(expected: now.received, session: now)
        }
    }
}

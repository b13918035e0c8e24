import Foundation
import NIOCore
import SpotCore

/// Upload sessions' bytes as blobs, one for each chunk, where blobs are in an object store
/// (S3): a chunk is stored under a lease and recorded with its digest, and the finished
/// upload is its chunks' blobs read back in order. A chunk's blob that nothing else names
/// is removed when its session ends.
struct UploadChunkBlobs: UploadByteStore {
    let guardedBlobs: GuardedBlobs
    let writer: BlobWriter

    func holds(_ session: UploadSession) -> Bool {
        session.chunks.allSatisfy { $0.digest != nil }
    }

    func append(_ chunk: IncomingChunk, to session: UploadSession) async throws -> (ReceivedChunk, UploadSession?) {
        let received = try await chunk.receive(nil, session)
        defer { try? FileManager.default.removeItem(atPath: received.written.path) }
        guard received.written.size > 0, let digest = received.written.digest else { return (received, nil) }
        let stored = UploadChunk(offset: chunk.offset, size: received.written.size, digest: digest)
        let appended = try await guardedBlobs.leasing([digest]) { lease in
            try await guardedBlobs.blobs.store(fileAt: received.written.path, as: digest)
            return try await chunk.record(stored, lease)
        }
        return (received, appended)
    }

    func finishedBytes(of session: UploadSession, whole: WholeDigests?, current: () async throws -> UploadSession) async throws -> StagedBlob {
        let bytes = ChunkBlobBytes(blobs: guardedBlobs.blobs, chunks: session.chunks)
        if let whole { return try await writer.assemble(bytes, whole: whole) }
        return try await writer.stage(bytes, maxBytes: session.received)
    }

    /// Removes the blobs of `session`'s chunks that nothing else names (a chunk may hold the
    /// same bytes as an object).
    func discardBytes(of session: UploadSession) async {
        for chunk in session.chunks {
            guard let digest = chunk.digest else { continue }
            _ = try? await guardedBlobs.removeIfUnreferenced(digest, cutoff: .distantPast, now: guardedBlobs.now())
        }
    }

    /// Nothing to do: a chunk's blob that nothing names is gc's.
    func removeBytesOfEndedSessions(now: Date, hasEnded: (String) async throws -> Bool) async throws {}
}

/// The bytes of an upload session's chunks in order, read from the blob store.
struct ChunkBlobBytes: AsyncSequence {
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

import Foundation

/// A resumable upload in progress, as the catalog keeps it: durable, and continued by any
/// instance. Its bytes arrive as chunks, each stored as a blob or appended to the session's
/// file (the service's choice); the finished object is
/// committed through `Catalog.commit` with `NewObject.uploadSession` naming it.
public struct UploadSession: Sendable, Equatable {
    /// The session's name in its upload URL: random, unguessable.
    public var id: String
    public var path: ObjectPath
    /// The uploader's uid; `""` for anonymous uploads.
    public var owner: String
    /// The total size the client declared, or `nil` until it is known.
    public var declaredSize: Int64?
    /// What the spot's commit will check, decided at the start.
    public var admission: SpotAdmission
    /// The service's record of the decision taken at the start (JSON); opaque to the catalog.
    public var terms: String
    /// The chunks received so far, in offset order, without gaps.
    public var chunks: [UploadChunk]
    public var createdAt: Date
    /// When the session is dropped unless another chunk arrives.
    public var expiresAt: Date

    public init(
        id: String, path: ObjectPath, owner: String, declaredSize: Int64?, admission: SpotAdmission, terms: String,
        chunks: [UploadChunk] = [], createdAt: Date, expiresAt: Date
    ) {
        self.id = id
        self.path = path
        self.owner = owner
        self.declaredSize = declaredSize
        self.admission = admission
        self.terms = terms
        self.chunks = chunks
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// The bytes received so far: where the next chunk must start.
    public var received: Int64 { chunks.last.map { $0.offset + $0.size } ?? 0 }
}

/// Bytes `offset..<offset+size` of an upload session, stored as blob `digest`, or in the
/// session's file when `digest` is `nil`.
public struct UploadChunk: Sendable, Equatable, Hashable {
    public var offset: Int64
    public var size: Int64
    public var digest: Digest?

    public init(offset: Int64, size: Int64, digest: Digest?) {
        self.offset = offset
        self.size = size
        self.digest = digest
    }
}

/// An upload session a commit completed: what a client asking about it afterwards is told.
public struct FinishedUpload: Sendable, Equatable {
    public var id: String
    /// The uploader's uid; `""` for anonymous uploads.
    public var owner: String
    /// The object the session stored, at this generation.
    public var path: ObjectPath
    public var generation: Int64
    public var size: Int64
    public var finishedAt: Date

    public init(id: String, owner: String, path: ObjectPath, generation: Int64, size: Int64, finishedAt: Date) {
        self.id = id
        self.owner = owner
        self.path = path
        self.generation = generation
        self.size = size
        self.finishedAt = finishedAt
    }
}

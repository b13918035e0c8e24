import Access
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import Media
import SpotCore

/// A body written to a temp file and hashed, ready to move into a `BlobStore`.
public struct StagedBlob: Sendable {
    /// The temp file; the caller moves it into the blob store or removes it.
    public let path: String
    public let digest: SpotCore.Digest
    public let size: Int64
    /// The first bytes, for sniffing the content type.
    public let head: [UInt8]
    /// The MD5 of the bytes, for Firebase's `md5Hash`; `nil` for a chunk staged with the
    /// digests of its whole upload instead, unless asked for (`stageKeepingPartial`).
    public let md5: [UInt8]?
    /// The SHA-1 of the bytes, when asked for (a tus checksum).
    public var sha1: [UInt8]? = nil
}

/// The SHA-256 and MD5 of an upload that arrives in chunks, worked out as they arrive, so
/// that the finished upload need not be read again (`BlobWriter.assemble`).
public struct WholeDigests: @unchecked Sendable {
    // @unchecked: swift-crypto's hash states are plain values without a Sendable conformance.
    fileprivate var sha256 = SHA256()
    fileprivate var md5 = Insecure.MD5()
    /// The bytes hashed so far.
    public fileprivate(set) var count: Int64 = 0

    public init() {}

    /// The digests of the bytes hashed so far.
    public var finalized: (digest: SpotCore.Digest, md5: [UInt8]) {
        (SpotCore.Digest(bytes: sha256.finalize()), Array(md5.finalize()))
    }
}

/// Streams bodies to temp files while hashing them, and stops the moment a size limit is
/// passed. This is where every blob's digest and size are established, above any backend.
public struct BlobWriter: Sendable {
    /// The directory for uploads in flight; it must be on the blob store's file system.
    public let temporaryDirectory: String

    /// How many leading bytes `StagedBlob.head` keeps.
    static let headLength = ImageSniffer.prefixLength

    /// Creates the directory if needed.
    public init(temporaryDirectory: String) throws {
        self.temporaryDirectory = temporaryDirectory
        try FileManager.default.createDirectory(atPath: temporaryDirectory, withIntermediateDirectories: true)
    }

    /// Writes `body` to a new temp file. Memory stays flat whatever the body's size.
    /// - Throws: `SpotError(.tooLarge)` as soon as more than `maxBytes` arrived (the temp
    ///   file is removed); `.insufficientStorage` when the disk is full; whatever the body throws.
    public func stage<Body: AsyncSequence>(_ body: Body, maxBytes: Int64) async throws -> StagedBlob
    where Body.Element: Collection, Body.Element.Element == UInt8 {
        let (staged, interruption, _) = try await stageKeepingPartial(body, maxBytes: maxBytes)
        if let interruption {
            unlink(staged.path)
            throw interruption
        }
        return staged
    }

    /// Like `stage(_:maxBytes:)`, but when the body itself fails (the client's connection
    /// dropped), the bytes that arrived are kept: they are returned with the body's error.
    /// With `whole`, the body is a chunk of a longer upload: `whole` goes on with it and is
    /// returned, and the chunk gets no MD5 of its own unless `checksum` asks for it.
    /// `checksum` (`"sha1"` or `"md5"`) is a digest the client sent to be checked.
    public func stageKeepingPartial<Body: AsyncSequence>(
        _ body: Body, maxBytes: Int64, continuing whole: WholeDigests? = nil, checksum: String? = nil
    ) async throws -> (StagedBlob, interruption: (any Error)?, whole: WholeDigests?)
    where Body.Element: Collection, Body.Element.Element == UInt8 {
        var hashers = Hashers(
            sha256: SHA256(), md5: whole == nil || checksum == "md5" ? Insecure.MD5() : nil,
            sha1: checksum == "sha1" ? Insecure.SHA1() : nil, whole: whole)
        let (path, size, head, interruption) = try await write(body, maxBytes: maxBytes, hashers: &hashers)
        var staged = StagedBlob(
            path: path, digest: SpotCore.Digest(bytes: hashers.sha256!.finalize()), size: size, head: head,
            md5: hashers.md5.map { Array($0.finalize()) })
        staged.sha1 = hashers.sha1.map { Array($0.finalize()) }
        return (staged, interruption, hashers.whole)
    }

    /// Writes the chunks of an upload whose digests `whole` already holds to one temp file,
    /// without hashing them again.
    /// - Throws: `.internal` when the bytes are not as many as `whole` hashed; what `body` throws.
    public func assemble<Body: AsyncSequence>(_ body: Body, whole: WholeDigests) async throws -> StagedBlob
    where Body.Element: Collection, Body.Element.Element == UInt8 {
        var hashers = Hashers()
        let (path, size, head, interruption) = try await write(body, maxBytes: whole.count, hashers: &hashers)
        guard interruption == nil, size == whole.count else {
            unlink(path)
            throw interruption ?? SpotError(.internal, "the upload's chunks hold \(size) bytes, not the \(whole.count) received")
        }
        let (digest, md5) = whole.finalized
        return StagedBlob(path: path, digest: digest, size: size, head: head, md5: md5)
    }

    /// Writes `body` to a new temp file, updating `hashers`; returns the file, its size, its
    /// first bytes and the body's own error, if it failed.
    private func write<Body: AsyncSequence>(
        _ body: Body, maxBytes: Int64, hashers: inout Hashers
    ) async throws -> (path: String, size: Int64, head: [UInt8], interruption: (any Error)?)
    where Body.Element: Collection, Body.Element.Element == UInt8 {
        let path = "\(temporaryDirectory)/upload-\(UUID().uuidString)"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SpotError.fromErrno("cannot create a temp file in \(temporaryDirectory)") }
        var size: Int64 = 0
        var head: [UInt8] = []
        var interruption: (any Error)?
        do {
            var chunks = body.makeAsyncIterator()
            while true {
                let next: Body.Element?
                do {
                    next = try await chunks.next()
                } catch {
                    interruption = error
                    break
                }
                guard let chunk = next else { break }
                size += Int64(chunk.count)
                guard size <= maxBytes else {
                    throw SpotError(.tooLarge, "the upload is larger than the limit of \(UploadLimits.describe(bytes: maxBytes)) for this path")
                }
                try Self.consume(chunk, fd: fd, hasher: &hashers, head: &head)
            }
            close(fd)
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        return (path, size, head, interruption)
    }

    /// The digest of a small in-memory blob (a thumbnail).
    public static func digest(of bytes: [UInt8]) -> SpotCore.Digest {
        SpotCore.Digest(bytes: SHA256.hash(data: bytes))
    }

    /// The digests worked out while a body is written: its own SHA-256 (and MD5, SHA-1), and
    /// those of the whole upload it continues.
    private struct Hashers {
        var sha256: SHA256?
        var md5: Insecure.MD5?
        var sha1: Insecure.SHA1?
        var whole: WholeDigests?

        mutating func update(_ buffer: UnsafeRawBufferPointer) {
            sha256?.update(bufferPointer: buffer)
            md5?.update(bufferPointer: buffer)
            sha1?.update(bufferPointer: buffer)
            if whole != nil {
                whole!.sha256.update(bufferPointer: buffer)
                whole!.md5.update(bufferPointer: buffer)
                whole!.count += Int64(buffer.count)
            }
        }
    }

    private static func consume<Chunk: Collection>(_ chunk: Chunk, fd: Int32, hasher: inout Hashers, head: inout [UInt8]) throws
    where Chunk.Element == UInt8 {
        let done: Void? = try chunk.withContiguousStorageIfAvailable { buffer in
            try write(UnsafeRawBufferPointer(buffer), fd: fd, hasher: &hasher, head: &head)
        }
        if done == nil {
            try Array(chunk).withUnsafeBytes { try write($0, fd: fd, hasher: &hasher, head: &head) }
        }
    }

    private static func write(_ buffer: UnsafeRawBufferPointer, fd: Int32, hasher: inout Hashers, head: inout [UInt8]) throws {
        hasher.update(buffer)
        if head.count < headLength {
            head.append(contentsOf: buffer.prefix(headLength - head.count))
        }
        var written = 0
        while written < buffer.count {
            #if canImport(Glibc)
            let result = Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
            #else
            let result = Darwin.write(fd, buffer.baseAddress! + written, buffer.count - written)
            #endif
            if result < 0 {
                if errno == EINTR { continue }
                throw SpotError.fromErrno("cannot write an upload to temp space")
            }
            written += result
        }
    }
}

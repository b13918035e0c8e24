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
        let path = "\(temporaryDirectory)/upload-\(UUID().uuidString)"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SpotError.fromErrno("cannot create a temp file in \(temporaryDirectory)") }
        var hasher = SHA256()
        var size: Int64 = 0
        var head: [UInt8] = []
        do {
            for try await chunk in body {
                size += Int64(chunk.count)
                guard size <= maxBytes else {
                    throw SpotError(.tooLarge, "the upload is larger than the limit of \(UploadLimits.describe(bytes: maxBytes)) for this path")
                }
                try Self.consume(chunk, fd: fd, hasher: &hasher, head: &head)
            }
            close(fd)
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        return StagedBlob(path: path, digest: SpotCore.Digest(bytes: hasher.finalize()), size: size, head: head)
    }

    /// The digest of a small in-memory blob (a thumbnail).
    public static func digest(of bytes: [UInt8]) -> SpotCore.Digest {
        SpotCore.Digest(bytes: SHA256.hash(data: bytes))
    }

    private static func consume<Chunk: Collection>(_ chunk: Chunk, fd: Int32, hasher: inout SHA256, head: inout [UInt8]) throws
    where Chunk.Element == UInt8 {
        let done: Void? = try chunk.withContiguousStorageIfAvailable { buffer in
            try write(UnsafeRawBufferPointer(buffer), fd: fd, hasher: &hasher, head: &head)
        }
        if done == nil {
            try Array(chunk).withUnsafeBytes { try write($0, fd: fd, hasher: &hasher, head: &head) }
        }
    }

    private static func write(_ buffer: UnsafeRawBufferPointer, fd: Int32, hasher: inout SHA256, head: inout [UInt8]) throws {
        hasher.update(bufferPointer: buffer)
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

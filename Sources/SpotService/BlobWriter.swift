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
    /// The MD5 of the bytes, for Firebase's `md5Hash`.
    public let md5: [UInt8]
}

/// A chunk of an upload as `BlobWriter.writeChunk` wrote it, with the digests asked for.
struct WrittenChunk {
    /// The file written: a new temp file, or the `OpenFile` given.
    let path: String
    let size: Int64
    /// The chunk's SHA-256, the name of its blob; `nil` when not asked for.
    let digest: SpotCore.Digest?
    /// The MD5 and SHA-1, when a checksum asked for them.
    let md5: [UInt8]?
    let sha1: [UInt8]?
}

/// A file open for writing, and its path: bytes staged into it are pushed towards the disk
/// as they arrive, since it is synced when they end (an upload session's file).
struct OpenFile {
    let descriptor: Int32
    let path: String
}

/// Linux's `sync_file_range(fd, offset, count, flags)`, which starts writing a file's dirty
/// pages without waiting for them; looked up at run time, as Glibc's Swift module leaves it
/// out (`nil` where there is none: the sync at the end then writes everything).
private let startWriteback: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
}()

/// `SYNC_FILE_RANGE_WRITE`: start writeback of the dirty pages in the range; offset and count 0 mean the whole file.
private let syncFileRangeWrite: UInt32 = 2

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

    /// How many bytes written into an `OpenFile` start their way to the disk at once.
    static let writebackStep: Int64 = 1 << 20

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
        var hashers = Hashers(sha256: SHA256(), md5: Insecure.MD5())
        let (path, size, head, interruption) = try await write(body, maxBytes: maxBytes, hashers: &hashers)
        if let interruption {
            unlink(path)
            throw interruption
        }
        return hashers.staged(at: path, size: size, head: head)
    }

    /// Writes `body`, a chunk of a longer upload, to `file` (where its descriptor stands) or
    /// else a new temp file. When the body itself fails (the client's connection dropped),
    /// the bytes that arrived are kept: they are returned with the body's error. `whole` goes
    /// on with the chunk and is returned. The chunk's own SHA-256 is worked out when it is to
    /// name a blob (`namingBlob`) or `checksum` asks for it; `checksum` (`"sha1"`, `"sha256"`
    /// or `"md5"`) is a digest the client sent to be checked.
    /// - Throws: as `stage(_:maxBytes:)`; the bytes written to `file` stay whatever happens.
    func writeChunk<Body: AsyncSequence>(
        _ body: Body, maxBytes: Int64, continuing whole: WholeDigests?, checksum: String?, namingBlob: Bool, into file: OpenFile?
    ) async throws -> (WrittenChunk, interruption: (any Error)?, whole: WholeDigests?)
    where Body.Element: Collection, Body.Element.Element == UInt8 {
        var hashers = Hashers(
            sha256: namingBlob || checksum == "sha256" ? SHA256() : nil, md5: checksum == "md5" ? Insecure.MD5() : nil,
            sha1: checksum == "sha1" ? Insecure.SHA1() : nil, whole: whole)
        let (path, size, _, interruption) = try await write(body, maxBytes: maxBytes, hashers: &hashers, into: file)
        let written = WrittenChunk(
            path: path, size: size, digest: hashers.sha256.map { SpotCore.Digest(bytes: $0.finalize()) },
            md5: hashers.md5.map { Array($0.finalize()) }, sha1: hashers.sha1.map { Array($0.finalize()) })
        return (written, interruption, hashers.whole)
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

    /// A new name in the temp directory.
    func temporaryPath() -> String { "\(temporaryDirectory)/upload-\(UUID().uuidString)" }

    /// The file at `path` (made elsewhere and linked into the temp directory) as staged bytes:
    /// with `whole`, the digests of its bytes worked out as they arrived, so only its first
    /// bytes are read; without, it is read and hashed.
    /// - Throws: `.internal` when it does not hold the bytes `whole` hashed.
    func adopt(fileAt path: String, whole: WholeDigests?) throws -> StagedBlob {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SpotError.fromErrno("cannot read \(path)") }
        defer { close(fd) }
        var hashers = whole == nil ? Hashers(sha256: SHA256(), md5: Insecure.MD5()) : Hashers()
        var head: [UInt8] = []
        var size: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: whole == nil ? 1 << 20 : Self.headLength, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw SpotError.fromErrno("cannot read \(path)") }
            if count == 0 { break }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            hashers.update(bytes)
            Self.keepHead(of: bytes, in: &head)
            size += Int64(count)
            if whole != nil { break }  // the first bytes are enough
        }
        guard let whole else {
            return hashers.staged(at: path, size: size, head: head)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, Int64(info.st_size) == whole.count else {
            throw SpotError(.internal, "the upload's file does not hold the \(whole.count) bytes received")
        }
        let (digest, md5) = whole.finalized
        return StagedBlob(path: path, digest: digest, size: whole.count, head: head, md5: md5)
    }

    /// Writes `body` to `file`, or else a new temp file (removed if this throws), updating
    /// `hashers`; returns the file, the size written, the first bytes and the body's own
    /// error, if it failed.
    private func write<Body: AsyncSequence>(
        _ body: Body, maxBytes: Int64, hashers: inout Hashers, into file: OpenFile? = nil
    ) async throws -> (path: String, size: Int64, head: [UInt8], interruption: (any Error)?)
    where Body.Element: Collection, Body.Element.Element == UInt8 {
        let target: OpenFile
        if let file {
            target = file
        } else {
            let path = temporaryPath()
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw SpotError.fromErrno("cannot create a temp file in \(temporaryDirectory)") }
            target = OpenFile(descriptor: fd, path: path)
        }
        defer { if file == nil { close(target.descriptor) } }
        let fd = target.descriptor
        var size: Int64 = 0, pushed: Int64 = 0
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
                if file != nil, size - pushed >= Self.writebackStep {
                    // The file will be synced when the body ends: its bytes go to the disk meanwhile.
                    _ = startWriteback?(fd, 0, 0, syncFileRangeWrite)
                    pushed = size
                }
            }
        } catch {
            if file == nil { unlink(target.path) }
            throw error
        }
        return (target.path, size, head, interruption)
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

        /// The file at `path` as a staged blob, with the SHA-256 and MD5 worked out (both asked for).
        func staged(at path: String, size: Int64, head: [UInt8]) -> StagedBlob {
            StagedBlob(path: path, digest: SpotCore.Digest(bytes: sha256!.finalize()), size: size, head: head, md5: Array(md5!.finalize()))
        }

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

    /// Adds to `head` what it lacks of the first `headLength` bytes from `buffer`, which follows them.
    private static func keepHead(of buffer: UnsafeRawBufferPointer, in head: inout [UInt8]) {
        if head.count < headLength {
            head.append(contentsOf: buffer.prefix(headLength - head.count))
        }
    }

    private static func write(_ buffer: UnsafeRawBufferPointer, fd: Int32, hasher: inout Hashers, head: inout [UInt8]) throws {
        hasher.update(buffer)
        keepHead(of: buffer, in: &head)
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

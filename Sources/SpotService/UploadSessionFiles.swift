#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SpotCore

/// The bytes of upload sessions as one file each (`<directory>/<session id>`), on the file
/// system of a file-system blob store: a chunk is appended and made durable before the
/// catalog records it, and the finished file becomes the object's blob by a hard link, so
/// its bytes are written once. (With an object store, each chunk is a blob instead.)
///
/// Every change to a file is made holding its lock (`flock`), which every process serving
/// the store takes alike, and only after the catalog, read under the lock, agrees: so two
/// requests for one offset cannot overwrite each other's bytes.
struct UploadSessionFiles: Sendable {
    let directory: String

    /// Creates `directory` if needed.
    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Runs `write` with session `id`'s file open at `offset` and locked: `check` (the
    /// catalog's view, which must still end at `offset`) runs first, then anything a crash
    /// left past `offset` is cut off. `write` writes the chunk there, makes it durable
    /// (`sync`) and records it in the catalog before the lock is let go.
    func append<Result>(
        to id: String, at offset: Int64, check: () async throws -> Void, write: (OpenFile) async throws -> Result
    ) async throws -> Result {
        // Only the first chunk makes the file: a later one without it finds the bytes lost.
        try await withLock(on: id, creating: offset == 0) { fd in
            try await check()
            guard ftruncate(fd, off_t(offset)) == 0, lseek(fd, off_t(offset), SEEK_SET) == off_t(offset) else {
                throw SpotError.fromErrno("cannot cut an upload session's file")
            }
            return try await write(OpenFile(descriptor: fd, path: path(of: id)))
        }
    }

    /// Makes what was written to `file` durable, with its name in the directory when the
    /// first chunk made it.
    func sync(_ file: OpenFile, madeNow: Bool) async throws {
        try await onFileThread {
            guard fdatasync(file.descriptor) == 0 else { throw SpotError.fromErrno("cannot sync an upload session's file") }
            if madeNow { try fsyncFile(at: directory) }
        }
    }

    /// Links session `id`'s file at `destination` (a new name on the same file system) once
    /// `check` confirms, under the lock, that the session holds `received` bytes: the file is
    /// cut to that length first (a crashed append may have left more).
    /// - Throws: `.internal` when the file holds fewer bytes (they were lost); `check`'s errors.
    func link(_ id: String, holding received: Int64, at destination: String, check: () async throws -> Void) async throws {
        // An upload of no bytes never had a chunk to make the file.
        try await withLock(on: id, creating: received == 0) { fd in
            try await check()
            try await onFileThread {
                var info = stat()
                guard fstat(fd, &info) == 0 else { throw SpotError.fromErrno("cannot read an upload session's file") }
                guard Int64(info.st_size) >= received else {
                    throw SpotError(.internal, "the upload session's file holds \(info.st_size) of its \(received) bytes; the upload must start again")
                }
                if Int64(info.st_size) > received, ftruncate(fd, off_t(received)) != 0 {
                    throw SpotError.fromErrno("cannot cut an upload session's file")
                }
                if hardLink(path(of: id), destination) != 0 {
                    guard errno == EXDEV else { throw SpotError.fromErrno("cannot link an upload session's file") }
                    // The temp directory is on another file system: the bytes are copied instead.
                    let copy = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                    guard copy >= 0 else { throw SpotError.fromErrno("cannot create \(destination)") }
                    defer { close(copy) }
                    try Self.copy(from: path(of: id), to: copy, at: 0, count: received)
                }
            }
        }
    }

    /// Removes session `id`'s file, if any (the session ended).
    func remove(_ id: String) async {
        try? await withLock(on: id, creating: false) { _ in unlink(path(of: id)) }
    }

    /// The ids of the sessions that have a file here.
    func sessionIDs() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter(Self.isSessionID)
    }

    /// Where session `id`'s bytes are.
    private func path(of id: String) -> String { "\(directory)/\(id)" }

    /// Whether `id` can name a file here: base64url characters only, never a path.
    private static func isSessionID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && Base64URL.isAlphabet(id)
    }

    /// Runs `body` with session `id`'s file open and locked against every other process and
    /// request; the lock goes with the descriptor when `body` ends.
    /// - Throws: `.internal` when the file is missing and not `creating` (its bytes were lost).
    private func withLock<Result>(on id: String, creating: Bool, _ body: (Int32) async throws -> Result) async throws -> Result {
        guard Self.isSessionID(id) else { throw SpotError(.badRequest, "an upload session id holds base64url characters only") }
        let path = path(of: id)
        let fd = open(path, O_RDWR | O_CLOEXEC | (creating ? O_CREAT : 0), 0o600)
        guard fd >= 0 else {
            if errno == ENOENT { throw SpotError(.internal, "the bytes of this upload session are missing; the upload must start again") }
            throw SpotError.fromErrno("cannot open an upload session's file")
        }
        defer { close(fd) }
        // Waiting for another request's append happens on a thread of its own.
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw SpotError.fromErrno("cannot lock an upload session's file") }
            try await onFileThread {
                while flock(fd, LOCK_EX) != 0 {
                    guard errno == EINTR else { throw SpotError.fromErrno("cannot lock an upload session's file") }
                }
            }
        }
        return try await body(fd)
    }

    /// Copies `count` bytes of the file at `source` into `fd` at `offset`.
    private static func copy(from source: String, to fd: Int32, at offset: Int64, count: Int64) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw SpotError.fromErrno("cannot read a staged upload chunk") }
        defer { close(input) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var copied: Int64 = 0
        while copied < count {
            let read = pread(input, buffer.baseAddress, min(buffer.count, Int(count - copied)), off_t(copied))
            if read < 0, errno == EINTR { continue }
            guard read > 0 else { throw SpotError.fromErrno("cannot read a staged upload chunk") }
            var written = 0
            while written < read {
                let result = pwrite(fd, buffer.baseAddress! + written, read - written, off_t(offset + copied) + off_t(written))
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { throw SpotError.fromErrno("cannot write an upload session's file") }
                written += result
            }
            copied += Int64(read)
        }
    }
}

#if canImport(Glibc)
private let hardLink = Glibc.link
#elseif canImport(Darwin)
private let hardLink = Darwin.link
#endif

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
/// its bytes are written once.
///
/// Every write to a file is made holding its lock (`flock`), which every process serving
/// the store takes alike, and only after the catalog, read under the lock, agrees: so two
/// requests for one offset cannot overwrite each other's bytes. A file with a second link
/// (its upload is being finished, or is a blob already) is never written again.
struct UploadSessionFiles: UploadByteStore {
    let directory: String
    let writer: BlobWriter

    /// How long an append waits for another request holding the session's file, while that
    /// request shows no sign of life, before it is told to ask where the upload is and go on
    /// from there. The holder shows life by changing the file: its bytes while they arrive,
    /// its times while it reads the catalog, syncs and records them (`touching`); so only a
    /// client that stopped sending holds others off; a catalog that hangs holds them as long
    /// as it hangs, until its own deadlines end that. (A finish waits as long as it takes:
    /// what holds the file then is an append, whose end it needs.)
    static let appendLockWait: Duration = .seconds(2)

    /// Files not changed for this long and whose session the catalog no longer has are removed
    /// by the sweep (younger ones may be a first chunk's file being made).
    static let orphanAge: TimeInterval = 3600

    /// Creates `directory` if needed, durably.
    init(directory: String, writer: BlobWriter) throws {
        self.directory = directory
        self.writer = writer
        if !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try fsyncFile(at: (directory as NSString).deletingLastPathComponent)
        }
    }

    /// A session whose chunks are blobs started where sessions keep their bytes so, or before
    /// they were kept in files: it goes on that way.
    func holds(_ session: UploadSession) -> Bool {
        session.chunks.allSatisfy { $0.digest == nil }
    }

    /// Opens the session's file at `chunk.offset` and locks it; `chunk.current` (the catalog's
    /// view, which must still end there) runs first, then anything a crash left past the
    /// offset is cut off. The chunk is written there, made durable and recorded in the
    /// catalog before the lock is let go.
    /// - Throws: `.conflict` when another request holds the lock without a sign of life for
    ///   `appendLockWait`, or the upload is being finished; `.internal` when bytes the
    ///   catalog holds are not in the file.
    func append(_ chunk: IncomingChunk, to session: UploadSession) async throws -> (ReceivedChunk, UploadSession?) {
        let offset = chunk.offset
        // Only the first chunk makes the file: a later one without it finds the bytes lost.
        return try await withLock(on: session.id, creating: offset == 0, waitingAtMost: Self.appendLockWait, check: chunk.current) { fd, current in
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw SpotError.fromErrno("cannot read an upload session's file") }
            guard info.st_nlink <= 1 else { throw SpotError(.conflict, "the upload is being finished; ask where it is") }
            guard Int64(info.st_size) >= offset else { throw Self.lostBytes }
            guard ftruncate(fd, off_t(offset)) == 0, lseek(fd, off_t(offset), SEEK_SET) == off_t(offset) else {
                throw SpotError.fromErrno("cannot cut an upload session's file")
            }
            let file = OpenFile(descriptor: fd, path: path(of: session.id))
            let received = try await chunk.receive(file, current)
            guard received.written.size > 0 else { return (received, nil) }
            return try await Self.touching(fd) {
                try await sync(file, madeNow: offset == 0)
                return (received, try await chunk.record(UploadChunk(offset: offset, size: received.written.size, digest: nil), nil))
            }
        }
    }

    /// Runs `work` while setting `fd`'s file times to now every quarter of `appendLockWait`,
    /// so that a request waiting for the file sees its holder at work (see `lock`). The
    /// touching ends before this returns (the descriptor may be closed right after).
    private static func touching<Result>(_ fd: Int32, _ work: () async throws -> Result) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                while true {
                    futimens(fd, nil)
                    try await Task.sleep(for: appendLockWait / 4)
                }
            }
            defer { group.cancelAll() }
            return try await work()
        }
    }

    /// Makes what was written to `file` durable, with its name in the directory when the
    /// first chunk made it.
    private func sync(_ file: OpenFile, madeNow: Bool) async throws {
        try await onFileThread {
            guard fdatasync(file.descriptor) == 0 else { throw SpotError.fromErrno("cannot sync an upload session's file") }
            if madeNow { try fsyncFile(at: directory) }
        }
    }

    /// The session's file, linked into the temp directory (see `link`).
    func finishedBytes(of session: UploadSession, whole: WholeDigests?, current: () async throws -> UploadSession) async throws -> StagedBlob {
        let path = writer.temporaryPath()
        try await link(session.id, holding: session.received, at: path, check: current)
        do {
            // Without the digests carried from chunk to chunk, the file is read and hashed.
            let writer = self.writer
            return try await onFileThread { try writer.adopt(fileAt: path, whole: whole) }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
    }

    /// Links session `id`'s file at `destination` (a new name, copied instead where the
    /// file system cannot link there) once `check` confirms, under the lock, that the session
    /// holds `received` bytes: the file is cut to that length first (a crashed append may
    /// have left more).
    /// - Throws: `.internal` when the file holds fewer bytes (they were lost); `.notFound`
    ///   when it was removed meanwhile (the session ended); `check`'s errors.
    private func link(_ id: String, holding received: Int64, at destination: String, check: () async throws -> UploadSession) async throws {
        // An upload of no bytes never had a chunk to make the file.
        try await withLock(on: id, creating: received == 0, waitingAtMost: nil, check: check) { fd, _ in
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw SpotError.fromErrno("cannot read an upload session's file") }
            guard Int64(info.st_size) >= received else { throw Self.lostBytes }
            if Int64(info.st_size) > received {
                // Never so once linked: a linked file is not written to.
                guard info.st_nlink <= 1, ftruncate(fd, off_t(received)) == 0 else {
                    throw SpotError(.internal, "an upload session's file holds more than its bytes and cannot be cut")
                }
            }
            try await Self.touching(fd) { try await onFileThread { try linkOrCopy(id, to: destination, count: received) } }
        }
    }

    /// Removes the session's file, if any (the session ended: nothing can record a chunk in
    /// it any more, so this needs no lock).
    func discardBytes(of session: UploadSession) async {
        remove(session.id)
    }

    /// Removes the files, unchanged for `orphanAge` by `now`, of sessions that have ended.
    func removeBytesOfEndedSessions(now: Date, hasEnded: (String) async throws -> Bool) async throws {
        let cutoff = now.addingTimeInterval(-Self.orphanAge)
        let unchanged = try FileManager.default.contentsOfDirectory(atPath: directory).filter { name in
            let changed = (try? FileManager.default.attributesOfItem(atPath: path(of: name)))?[.modificationDate] as? Date
            return Self.isSessionID(name) && changed.map { $0 < cutoff } == true
        }
        for id in unchanged where try await hasEnded(id) {
            remove(id)
        }
    }

    /// Removes session `id`'s file, if any.
    private func remove(_ id: String) {
        guard Self.isSessionID(id) else { return }
        unlink(path(of: id))
    }

    /// Why an upload cannot go on: bytes the catalog holds are not in its file.
    private static let lostBytes = SpotError(.internal, "the bytes of this upload session are missing; the upload must start again")

    /// Where session `id`'s bytes are.
    private func path(of id: String) -> String { "\(directory)/\(id)" }

    /// Whether `id` can name a file here: base64url characters only, never a path.
    private static func isSessionID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && Base64URL.isAlphabet(id)
    }

    /// Runs `body` with session `id`'s file open and locked against every other process and
    /// request, and the session as `check` reads it then; the lock goes with the descriptor
    /// when `body` ends.
    /// - Throws: `check`'s errors; `.internal` when the file is missing and not `creating`
    ///   although the session is there (its bytes were lost); `.conflict` when the file's
    ///   holder shows no sign of life for `wait` (`nil`: no limit).
    private func withLock<Result>(
        on id: String, creating: Bool, waitingAtMost wait: Duration?, check: () async throws -> UploadSession,
        _ body: (Int32, UploadSession) async throws -> Result
    ) async throws -> Result {
        guard Self.isSessionID(id) else { throw SpotError(.badRequest, "an upload session id holds base64url characters only") }
        let fd = open(path(of: id), O_RDWR | O_CLOEXEC | (creating ? O_CREAT : 0), 0o600)
        guard fd >= 0 else {
            guard errno == ENOENT else { throw SpotError.fromErrno("cannot open an upload session's file") }
            _ = try await check()  // a session that ended says so
            throw Self.lostBytes
        }
        defer { close(fd) }
        try await Self.lock(fd, waitingAtMost: wait)
        let current = try await Self.touching(fd) { try await check() }
        return try await body(fd, current)
    }

    /// The longest pause between two looks at a held file's lock.
    private static let longestPause: Duration = .milliseconds(100)

    /// Takes `fd`'s lock, waiting for another request (without holding a thread) as long as
    /// it takes, or until the file has not changed for `quiet` (its holder stopped). The
    /// quiet time is what this wait saw: the time between two looks counts for one pause at
    /// most, so a stall of the whole process (which stalls the holder too) is not taken for
    /// a holder that stopped.
    private static func lock(_ fd: Int32, waitingAtMost quiet: Duration?) async throws {
        var (state, lastLook, quietFor) = (fileState(fd), ContinuousClock.now, Duration.zero)
        var pause = Duration.milliseconds(2)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw SpotError.fromErrno("cannot lock an upload session's file") }
            if let quiet {
                let (now, seen) = (ContinuousClock.now, fileState(fd))
                quietFor = seen == state ? quietFor + min(now - lastLook, longestPause) : .zero
                (state, lastLook) = (seen, now)
                if quietFor >= quiet {
                    throw SpotError(.conflict, "another request holds this upload and has sent nothing for \(quiet.components.seconds) s; ask where the upload is, then go on from there")
                }
            }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, longestPause)
        }
    }

    /// What changes when a file's holder writes to it or touches it: its size and change time.
    private static func fileState(_ fd: Int32) -> [Int] {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return [] }
        #if canImport(Darwin)
        let changed = info.st_ctimespec
        #else
        let changed = info.st_ctim
        #endif
        return [Int(info.st_size), Int(changed.tv_sec), Int(changed.tv_nsec)]
    }

    /// Links session `id`'s file at `destination`, or copies its first `count` bytes there
    /// where the file system cannot (another file system, no hard links).
    private func linkOrCopy(_ id: String, to destination: String, count: Int64) throws {
        let source = path(of: id)
        guard hardLink(source, destination) != 0 else { return }
        // Removed since the lock was taken: the session ended (another request finished it).
        if errno == ENOENT { throw SpotError(.notFound, "the upload session ended meanwhile") }
        guard [EXDEV, EPERM, ENOTSUP, EOPNOTSUPP, EMLINK].contains(errno) else {
            throw SpotError.fromErrno("cannot link an upload session's file")
        }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw SpotError.fromErrno("cannot read an upload session's file") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw SpotError.fromErrno("cannot create \(destination)") }
        defer { close(output) }
        do {
            try Self.copy(count, from: input, to: output)
        } catch {
            unlink(destination)
            throw error
        }
    }

    /// Copies the first `count` bytes of `input` to `output`.
    private static func copy(_ count: Int64, from input: Int32, to output: Int32) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var copied: Int64 = 0
        while copied < count {
            let read = pread(input, buffer.baseAddress, min(buffer.count, Int(count - copied)), off_t(copied))
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { throw SpotError.fromErrno("cannot read an upload session's file") }
            guard read > 0 else { throw lostBytes }
            var written = 0
            while written < read {
                let result = pwrite(output, buffer.baseAddress! + written, read - written, off_t(copied) + off_t(written))
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { throw SpotError.fromErrno("cannot copy an upload session's file") }
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

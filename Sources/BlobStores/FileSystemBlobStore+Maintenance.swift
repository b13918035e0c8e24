#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SpotCore

extension FileSystemBlobStore {
    /// Where `quarantine(_:)` moves blobs: `quarantine/` beside `root` (for the store
    /// layout, `STORE/quarantine/` beside `STORE/blobs/`), on the same file system.
    public var quarantineRoot: String {
        (root as NSString).deletingLastPathComponent + "/quarantine"
    }

    /// Walks `root/sha256/`: files named by their digest in the right shard are blobs;
    /// anything else (temp files of writes in progress, strays) is listed in `strays`.
    public func inventory() async throws -> BlobInventory {
        let base = "\(root)/sha256"
        guard let enumerator = FileManager.default.enumerator(atPath: base) else { return BlobInventory(blobs: []) }
        var blobs: [StoredBlob] = []
        var strays: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let path = "\(base)/\(relative)"
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }  // gone meanwhile (gc, quarantine)
            guard (info.st_mode & S_IFMT) == S_IFREG else { continue }
            let parts = relative.split(separator: "/")
            guard parts.count == 3, let digest = Digest(hex: String(parts[2])), digest.hex == parts[2],
                  parts[0] == digest.hex.prefix(2), parts[1] == digest.hex.dropFirst(2).prefix(2)
            else {
                strays.append(path)
                continue
            }
            blobs.append(StoredBlob(digest: digest, size: Int64(info.st_size), modified: Self.modificationDate(info)))
        }
        return BlobInventory(blobs: blobs.sorted { $0.digest < $1.digest }, strays: strays.sorted())
    }

    public func location(of digest: Digest) -> String { path(of: digest) }

    public func removeInterruptedWrites() throws -> Int {
        try FileManager.default.removeContents(ofDirectory: incomingPath)
    }

    /// Renames the blob to `quarantineRoot/<hex>` (`<hex>.1`, `.2`… when taken) and fsyncs both directories.
    public func quarantine(_ digest: Digest) async throws -> String? {
        let source = path(of: digest)
        guard FileManager.default.fileExists(atPath: source) else { return nil }
        try FileManager.default.createDirectory(atPath: quarantineRoot, withIntermediateDirectories: true)
        var destination = "\(quarantineRoot)/\(digest.hex)"
        var suffix = 0
        while FileManager.default.fileExists(atPath: destination) {
            suffix += 1
            destination = "\(quarantineRoot)/\(digest.hex).\(suffix)"
        }
        guard rename(source, destination) == 0 else {
            if errno == ENOENT { return nil }
            throw SpotError.fromErrno("cannot move blob \(digest) to \(destination)")
        }
        try fsyncFile(at: quarantineRoot)
        try fsyncFile(at: String(source[..<source.lastIndex(of: "/")!]))
        return destination
    }

    public func remove(_ digest: Digest, ifModifiedBefore cutoff: Date) async throws -> Bool {
        let path = path(of: digest)
        return try withRemovalLock(exclusive: true) {
            var info = stat()
            guard stat(path, &info) == 0 else {
                if errno == ENOENT { return false }
                throw SpotError.fromErrno("cannot stat blob \(digest)")
            }
            guard Self.modificationDate(info) < cutoff else { return false }
            guard unlink(path) == 0 else {
                if errno == ENOENT { return false }
                throw SpotError.fromErrno("cannot remove blob \(digest)")
            }
            return true
        }
    }

    static func modificationDate(_ info: stat) -> Date {
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        return Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9)
    }
}

extension FileSystemBlobStore {
    /// Whether the blob file at `path` exists with `size` bytes and `sameBytes(path)` finds
    /// it holds the bytes being stored; when it does, its modification time is set to now.
    /// A blob of another size or with other bytes was cut short or damaged on disk: the
    /// caller then writes its own copy over it, so storing the bytes again heals it.
    /// All of this happens under the shared removal lock, so `remove(_:ifModifiedBefore:)`
    /// cannot remove the blob between this finding it and refreshing its time (which would
    /// leave the catalog commit that follows naming a blob that is gone).
    func refreshIfIntact(_ path: String, size: Int64, holdsSameBytesAs sameBytes: (String) throws -> Bool) throws -> Bool {
        try withRemovalLock(exclusive: false) {
            var info = stat()
            guard stat(path, &info) == 0, Int64(info.st_size) == size, try sameBytes(path) else { return false }
            return utimensat(AT_FDCWD, path, nil, 0) == 0 || errno != ENOENT
        }
    }

    /// Whether the files at `path` and `other` hold the same bytes (read in chunks).
    static func file(at path: String, equals other: String) throws -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SpotError.fromErrno("cannot open \(path)") }
        defer { close(fd) }
        var mine = [UInt8](repeating: 0, count: chunkSize)
        return try withChunks(ofFileAt: other) { offset, chunk in
            mine.withUnsafeMutableBytes { buffer in
                readFully(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<chunk.count]), at: offset) == chunk.count
                    && memcmp(buffer.baseAddress!, chunk.baseAddress!, chunk.count) == 0
            }
        }
    }

    /// Whether the file at `path` holds `bytes` (read in chunks).
    static func file(at path: String, equals bytes: [UInt8]) throws -> Bool {
        try withChunks(ofFileAt: path) { offset, chunk in
            offset + chunk.count <= bytes.count
                && bytes.withUnsafeBytes { memcmp($0.baseAddress! + offset, chunk.baseAddress!, chunk.count) == 0 }
        }
    }

    /// Hands the file at `path` to `matches` in chunks of up to 1 MiB with their offsets,
    /// stopping at the first `false`; whether every chunk matched.
    static func withChunks(ofFileAt path: String, _ matches: (Int, UnsafeRawBufferPointer) -> Bool) throws -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SpotError.fromErrno("cannot open \(path)") }
        defer { close(fd) }
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var offset = 0
        while true {
            let got = chunk.withUnsafeMutableBytes { readFully(fd, into: $0, at: offset) }
            guard got >= 0 else { throw SpotError.fromErrno("cannot read \(path)") }
            if got == 0 { return true }
            guard chunk.withUnsafeBytes({ matches(offset, UnsafeRawBufferPointer(rebasing: $0[..<got])) }) else { return false }
            offset += got
        }
    }

    private static let chunkSize = 1 << 20

    /// Fills `buffer` from `fd` at `offset` (fewer bytes only at the end of the file); the
    /// count read, or -1 on an error (errno set).
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        var filled = 0
        while filled < buffer.count {
            let got = pread(fd, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset + filled))
            if got < 0 {
                if errno == EINTR { continue }
                return -1
            }
            if got == 0 { break }
            filled += got
        }
        return filled
    }

    /// Runs `body` holding `root/removal.lock` (flock): shared while a writer refreshes an
    /// existing blob, exclusive while `gc` checks a blob's time and removes it. It works
    /// across processes (`spotstore gc` next to a running server); each call opens its own
    /// descriptor, because flock locks taken through one descriptor do not exclude each other.
    func withRemovalLock<T>(exclusive: Bool, _ body: () throws -> T) throws -> T {
        let lockPath = "\(root)/removal.lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SpotError.fromErrno("cannot open \(lockPath)") }
        defer { close(fd) }
        while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            guard errno == EINTR else { throw SpotError.fromErrno("cannot lock \(lockPath)") }
        }
        return try body()
    }
}

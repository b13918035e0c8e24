#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SpotCore

/// Blobs as files under `root/sha256/ab/cd/<hex>`, written durably (temp file, fsync,
/// rename, fsync of the directory) and never modified in place.
public struct FileSystemBlobStore: BlobStore {
    /// The directory holding `sha256/`.
    public let root: String

    /// Where this process writes blobs before renaming them into place: its own temp
    /// directory (on the same file system), which it sweeps at start. A crash can leave
    /// files there, never among the blobs.
    let incomingPath: String

    /// Creates `root`, the 256 first-level shard directories (durably, so that storing a
    /// blob makes at most its second-level one) and `temporaryDirectory` if needed.
    public init(root: String, temporaryDirectory: String) throws {
        self.root = root
        self.incomingPath = temporaryDirectory
        let base = "\(root)/sha256"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let missing = (0..<256).map { String(format: "%02x", $0) }.filter { !FileManager.default.fileExists(atPath: "\(base)/\($0)") }
        // Another process may make them at the same time, and a read-only store cannot: a
        // folder still missing is made when a blob needs it (`makeShardDirectory`). The sync
        // covers the folders another process made too.
        for name in missing { try? FileManager.default.createDirectory(atPath: "\(base)/\(name)", withIntermediateDirectories: true) }
        if !missing.isEmpty, access(base, W_OK) == 0 { try fsyncFile(at: base) }
        try FileManager.default.createDirectory(atPath: temporaryDirectory, withIntermediateDirectories: true)
    }

    /// Where the blob `digest` lives (whether or not it exists).
    public func path(of digest: Digest) -> String {
        let hex = digest.hex
        return "\(root)/sha256/\(hex.prefix(2))/\(hex.dropFirst(2).prefix(2))/\(hex)"
    }

    /// Whether the blob and temp directories are still there and writable.
    public func checkHealth() throws {
        for directory in ["\(root)/sha256", incomingPath] where access(directory, W_OK | X_OK) != 0 {
            throw SpotError(.unavailable, "the blob directory \(directory) cannot be written: \(String(cString: strerror(errno)))")
        }
    }

    public func store(fileAt source: String, as digest: Digest) async throws {
        try await onFileThread { try storeNow(fileAt: source, as: digest) }
    }

    public func store(_ bytes: [UInt8], as digest: Digest) async throws {
        try await onFileThread { try storeNow(bytes, as: digest) }
    }

    private func storeNow(fileAt source: String, as digest: Digest) throws {
        let destination = path(of: digest)
        var staged = stat()
        guard stat(source, &staged) == 0 else { throw SpotError.fromErrno("cannot read \(source)") }
        if try holdsSameBytes(destination, size: Int64(staged.st_size), { try Self.file(at: source, equals: $0) }) {
            try? FileManager.default.removeItem(atPath: source)
            return
        }
        let directory = try makeShardDirectory(for: destination)
        try fsyncFile(at: source)
        if rename(source, destination) != 0 {
            guard errno == EXDEV else { throw SpotError.fromErrno("cannot move \(source) to \(destination)") }
            // Another file system: copy durably, then drop the source.
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source)))
            try writeDurably(bytes, to: destination, directory: directory)
            try? FileManager.default.removeItem(atPath: source)
            return
        }
        try fsyncFile(at: directory)
    }

    private func storeNow(_ bytes: [UInt8], as digest: Digest) throws {
        let destination = path(of: digest)
        guard try !holdsSameBytes(destination, size: Int64(bytes.count), { try Self.file(at: $0, equals: bytes) }) else { return }
        try writeDurably(bytes, to: destination, directory: try makeShardDirectory(for: destination))
    }

    public func size(of digest: Digest) async throws -> Int64? {
        var info = stat()
        guard stat(path(of: digest), &info) == 0 else {
            if errno == ENOENT { return nil }
            throw SpotError.fromErrno("cannot stat blob \(digest)")
        }
        return Int64(info.st_size)
    }

    public func read(_ digest: Digest, offset: Int64, count: Int) async throws -> [UInt8]? {
        let fd = open(path(of: digest), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw SpotError.fromErrno("cannot open blob \(digest)")
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: max(0, count))
        let filled = bytes.withUnsafeMutableBytes { Self.readFully(fd, into: $0, at: Int(offset)) }
        guard filled >= 0 else { throw SpotError.fromErrno("cannot read blob \(digest)") }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    public func remove(_ digest: Digest) async throws {
        guard unlink(path(of: digest)) == 0 || errno == ENOENT else { throw SpotError.fromErrno("cannot remove blob \(digest)") }
    }

    /// Creates the shard directory of `destination` when missing, with its new entry in
    /// `sha256/ab/` fsynced (and `ab`'s in `sha256/`, when something removed it) so that
    /// a power cut cannot lose the directory of a blob already reported stored; returns
    /// the directory.
    private func makeShardDirectory(for destination: String) throws -> String {
        let directory = String(destination[..<destination.lastIndex(of: "/")!])
        guard !FileManager.default.fileExists(atPath: directory) else { return directory }
        let parent = (directory as NSString).deletingLastPathComponent
        let parentWasThere = FileManager.default.fileExists(atPath: parent)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try fsyncFile(at: parent)
        if !parentWasThere { try fsyncFile(at: (parent as NSString).deletingLastPathComponent) }
        return directory
    }

    /// Writes to a unique temp file in the temp directory, fsyncs, renames, fsyncs the directory.
    private func writeDurably(_ bytes: [UInt8], to destination: String, directory: String) throws {
        let temp = "\(incomingPath)/\(UUID().uuidString).tmp"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SpotError.fromErrno("cannot create \(temp)") }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                let error = SpotError.fromErrno("cannot write \(temp)")
                close(fd)
                unlink(temp)
                throw error
            }
            written += result
        }
        guard fsync(fd) == 0 else {
            let error = SpotError.fromErrno("cannot fsync \(temp)")
            close(fd)
            unlink(temp)
            throw error
        }
        close(fd)
        guard rename(temp, destination) == 0 else {
            let error = SpotError.fromErrno("cannot rename \(temp)")
            unlink(temp)
            throw error
        }
        try fsyncFile(at: directory)
    }
}


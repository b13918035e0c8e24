#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SpotCore

extension FileSystemBlobStore {
    /// Walks the shard directories in order from `after`'s; files named by their digest in
    /// the right shard are blobs, anything else (strays) is skipped.
    public func blobs(after: Digest?, limit: Int) async throws -> [StoredBlob] {
        let base = "\(root)/sha256"
        let start = after?.hex ?? ""
        var page: [StoredBlob] = []
        for first in Self.names(in: base, from: String(start.prefix(2))) {
            for second in Self.names(in: "\(base)/\(first)", from: start.hasPrefix(first) ? String(start.dropFirst(2).prefix(2)) : "") {
                for name in Self.names(in: "\(base)/\(first)/\(second)", from: "") where name > start {
                    guard let digest = Digest(hex: name), digest.hex == name, name.hasPrefix(first + second) else { continue }
                    var info = stat()
                    guard lstat("\(base)/\(first)/\(second)/\(name)", &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                    page.append(StoredBlob(digest: digest, size: Int64(info.st_size)))
                    if page.count == limit { return page }
                }
            }
        }
        return page
    }

    /// The two-hex-digit shard names (or file names) in `directory` from `lowest` on, sorted;
    /// none when the directory is missing.
    private static func names(in directory: String, from lowest: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.filter { $0 >= lowest }.sorted()
    }
}

extension FileSystemBlobStore {
    /// Whether the blob file at `path` exists with `size` bytes and `sameBytes(path)` finds
    /// it holds the bytes being stored. A blob of another size or with other bytes was cut
    /// short or damaged on disk: the caller then writes its own copy over it, so storing
    /// the bytes again heals it.
    func holdsSameBytes(_ path: String, size: Int64, _ sameBytes: (String) throws -> Bool) throws -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, Int64(info.st_size) == size else { return false }
        return try sameBytes(path)
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
}

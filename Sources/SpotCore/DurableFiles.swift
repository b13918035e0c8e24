#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// fsyncs a file or directory by path.
package func fsyncFile(at path: String) throws {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw SpotError.fromErrno("cannot open \(path)") }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw SpotError.fromErrno("cannot fsync \(path)") }
}

/// Runs `work` (writes, fsyncs, renames or a lock wait, which wait for the disk or another
/// process) on a thread of its own, not on the caller's: under `serve` that is one of NIO's
/// event loops or the cooperative pool, which would stop serving other requests meanwhile.
package func onFileThread<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
        fileWork.async { continuation.resume(with: Swift.Result { try work() }) }
    }
}

/// A concurrent queue: several fsyncs wait for the disk at once.
private let fileWork = DispatchQueue(label: "SpotCore.fileWork", attributes: .concurrent)

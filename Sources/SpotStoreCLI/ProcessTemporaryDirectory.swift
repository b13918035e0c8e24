import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SpotCore

/// A temp directory only this process uses, `PARENT/<pid>-<random>/`, held for the life of
/// the process by an flock on `PARENT/<pid>-<random>.lock`.
///
/// Taking one removes the directories of processes that are gone (their lock can be
/// taken), never one whose process still runs: a server restarted next to others never
/// touches their uploads in flight.
final class ProcessTemporaryDirectory: Sendable {
    let path: String
    /// The descriptor holding the lock; closed (and so released) when the process ends.
    private let lockDescriptor: Int32

    init(under parent: String) throws {
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        Self.removeAbandoned(in: parent)
        let name = "\(getpid())-\(UUID().uuidString.prefix(8).lowercased())"
        // Locked under a name no sweeper looks at, then renamed: a lock file is never seen unlocked.
        let pending = "\(parent)/.\(name).pending"
        let fd = open(pending, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SpotError.fromErrno("cannot create a temp directory lock in \(parent)") }
        guard flock(fd, LOCK_EX) == 0, rename(pending, "\(parent)/\(name).lock") == 0 else {
            let error = SpotError.fromErrno("cannot lock a temp directory in \(parent)")
            close(fd)
            unlink(pending)
            throw error
        }
        path = "\(parent)/\(name)"
        lockDescriptor = fd
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        close(lockDescriptor)
    }

    /// Removes `PARENT/X/` and `PARENT/X.lock` for every lock no process holds, and what
    /// older SpotStore versions left directly in `PARENT` (files of one shared temp directory).
    private static func removeAbandoned(in parent: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        for name in names where !name.hasPrefix(".") {
            let path = "\(parent)/\(name)"
            guard name.hasSuffix(".lock") else {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                   name.hasPrefix("upload-") {
                    try? FileManager.default.removeItem(atPath: path)
                }
                continue
            }
            let fd = open(path, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }  // its process runs
            try? FileManager.default.removeItem(atPath: String(path.dropLast(".lock".count)))
            unlink(path)
        }
    }
}

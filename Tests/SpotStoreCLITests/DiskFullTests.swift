import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SpotCore
import Testing
import TestSupport

extension BinaryTests {
    /// A store on a small tmpfs that fills up: uploads get 507 with a clear message, and the
    /// store stays consistent (no temp files, earlier objects intact, fsck clean).
    ///
    /// Mounting the tmpfs needs root: without it the suite is left out, unless
    /// `SPOTSTORE_TEST_REQUIRE_SERVICES=1` (as on CI), where it runs and fails saying so.
    @Suite(.serialized, .enabled(if: getuid() == 0 || TestServers.required, "mounting a small tmpfs needs root"))
    struct DiskFullTests {
        /// Runs `command` with `arguments`, throwing when it fails.
        static func system(_ command: String, _ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = arguments
            try process.runSerially()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(command) \(arguments) failed"])
            }
        }

        static func request(_ method: String, _ url: String, token: String, body: [UInt8]? = nil) async throws -> (Int, [UInt8]) {
            let (status, data, _) = try await exchange(method, url, token: token, body: body)
            return (status, data)
        }

        /// `request`, also giving the response (for its headers); no Authorization without `token`.
        static func exchange(_ method: String, _ url: String, token: String?, body: [UInt8]? = nil) async throws -> (Int, [UInt8], HTTPURLResponse?) {
            var request = URLRequest(url: URL(string: url)!)
            request.httpMethod = method
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            let (data, response) = if let body {
                try await URLSession.shared.upload(for: request, from: Data(body))
            } else {
                try await URLSession.shared.data(for: request)
            }
            let http = response as? HTTPURLResponse
            return (http?.statusCode ?? 0, [UInt8](data), http)
        }

        /// A new 8 MiB tmpfs; returns where it is mounted.
        /// - Throws: when not root, or when the mount fails.
        static func mountSmallDisk() throws -> String {
            guard getuid() == 0 else {
                throw SpotError(.unavailable, "SPOTSTORE_TEST_REQUIRE_SERVICES=1 but the disk-full tests need root to mount a tmpfs: run the tests as root")
            }
            let mountPoint = NSTemporaryDirectory() + "spotstore-disk-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            try system("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mountPoint])
            return mountPoint
        }

        static func unmount(_ mountPoint: String) {
            try? system("/bin/umount", [mountPoint])
            try? FileManager.default.removeItem(atPath: mountPoint)
        }

        /// Writes zeros to `path` until the file system refuses, leaving it full.
        static func fill(_ path: String) {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            defer { close(fd) }
            let chunk = [UInt8](repeating: 0, count: 4096)
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        }

        @Test func aFullDiskGives507AndKeepsTheStoreConsistent() async throws {
            let mountPoint = try Self.mountSmallDisk()
            defer { Self.unmount(mountPoint) }
            let store = mountPoint + "/storage"
            let added = try BinaryTests.run(["users", "add", "alice", "--store", store])
            #expect(added.status == 0)
            let token = try #require(added.stdout.split(separator: "\n").last.map(String.init))
            let (server, url) = try await BinaryTests.startServer(store: store)
            defer { if server.isRunning { server.terminate() } }
            let object = { (name: String) in "\(url)/v0/b/media/o/alice%2F\(name)" }

            let kept = [randomBytes(2_000_000), randomBytes(2_000_000)]
            for (index, bytes) in kept.enumerated() {
                #expect(try await Self.request("PUT", object("kept-\(index)"), token: token, body: bytes).0 == 200)
            }
            // About 3.5 MB are left: a 5 MB body fills the disk while it is written.
            let (status, body) = try await Self.request("PUT", object("too-big"), token: token, body: randomBytes(5_000_000))
            #expect(status == 507)
            #expect(String(decoding: body, as: UTF8.self).contains("disk is full"))

            // Full to the last block: even a tiny blob does not fit.
            let filler = mountPoint + "/filler"
            Self.fill(filler)
            let (tinyStatus, tinyBody) = try await Self.request("PUT", object("tiny"), token: token, body: Array("hello".utf8))
            #expect(tinyStatus == 507, "\(String(decoding: tinyBody, as: UTF8.self))")
            // Two free blocks: the blob fits, the catalog's commit does not.
            let fillerHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
            try fillerHandle.truncate(atOffset: try fillerHandle.seekToEnd() - 8192)
            try fillerHandle.close()
            let (commitStatus, commitBody) = try await Self.request("PUT", object("tiny"), token: token, body: Array("hello".utf8))
            #expect(commitStatus == 507)
            #expect(String(decoding: commitBody, as: UTF8.self).contains("catalog cannot grow"))

            // Nothing of the refused uploads is visible or left in temp space; the rest is intact.
            for name in ["too-big", "tiny"] {
                #expect(try await Self.request("GET", object(name), token: token).0 == 404)
            }
            for (index, bytes) in kept.enumerated() {
                let (getStatus, stored) = try await Self.request("GET", object("kept-\(index)") + "?alt=media", token: token)
                #expect(getStatus == 200 && stored == bytes)
            }
            #expect(BinaryTests.temporaryFiles(in: store).isEmpty)

            // With space again, uploads succeed, and fsck finds nothing wrong.
            try FileManager.default.removeItem(atPath: filler)
            #expect(try await Self.request("PUT", object("tiny"), token: token, body: Array("hello".utf8)).0 == 200)
            server.terminate()
            server.waitUntilExit()
            let fsck = try BinaryTests.run(["fsck", "--store", store])
            #expect(fsck.status == 0, "\(fsck.stdout)\(fsck.stderr)")
        }

        /// A store on a read-only file system: commands that open it say so, instead of
        /// SQLite's "unable to open database file".
        @Test func aReadOnlyStoreIsNamedAsSuch() throws {
            let mountPoint = try Self.mountSmallDisk()
            defer { Self.unmount(mountPoint) }
            let store = mountPoint + "/storage"
            #expect(try BinaryTests.run(["users", "add", "alice", "--store", store]).status == 0)
            try Self.system("/bin/mount", ["-o", "remount,ro", mountPoint])
            for command in [["serve", "--port", "0"], ["fsck"], ["users", "add", "bob"]] {
                let result = try BinaryTests.run(command + ["--store", store])
                #expect(result.status != 0)
                #expect(result.stderr.contains("the store \(store) is not writable (Read-only file system)"), "\(command): \(result.stderr)")
            }
        }
    }
}

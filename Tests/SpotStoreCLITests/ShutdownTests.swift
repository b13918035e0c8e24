import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// Runs with every other test of the binary, one at a time: each blocks a thread of the
/// cooperative pool while the process runs, and two cores have only two such threads.
extension BinaryTests {
    /// SIGTERM against the real binary: uploads drain, new ones get 503, the process exits 0.
    @Suite(.serialized) struct ShutdownTests {
        /// A blocking HTTP/1.1 client on one TCP connection, so a test controls when each byte
        /// of a request goes out.
        final class RawConnection {
            let socket: Int32

            init(port: Int) throws {
                socket = try connectedSocket(port: port)
            }

            deinit { close(socket) }

            func send(_ bytes: [UInt8]) throws {
                var sent = 0
                while sent < bytes.count {
                    let count = bytes[sent...].withUnsafeBytes { Foundation.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard count > 0 else { throw POSIXError(.EPIPE) }
                    sent += count
                }
            }

            /// Everything the server sends until it closes the connection or `limit` seconds pass.
            func receiveResponse(limit: Int = 20) -> String {
                // One response is enough: stop once the JSON body is complete.
                let (received, _) = receive(limit: limit) { received in
                    let text = String(decoding: received, as: UTF8.self)
                    guard let end = text.range(of: "\r\n\r\n"), let length = Self.contentLength(text[..<end.lowerBound]) else { return false }
                    return received.count >= text[..<end.upperBound].utf8.count + length
                }
                return String(decoding: received, as: UTF8.self)
            }

            /// Every byte the server sends until it closes the connection, and whether it did
            /// (rather than send nothing for `limit` seconds).
            func receiveUntilClosed(limit: Int = 20) -> (bytes: [UInt8], closed: Bool) {
                receive(limit: limit) { _ in false }
            }

            /// What the server sends until `isEnough` says so, it closes the connection
            /// (`closed`), or it sends nothing for `limit` seconds.
            private func receive(limit: Int, until isEnough: ([UInt8]) -> Bool) -> (bytes: [UInt8], closed: Bool) {
                var timeout = timeval(tv_sec: limit, tv_usec: 0)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { return (received, count == 0) }
                    received += buffer[..<count]
                    if isEnough(received) { return (received, false) }
                }
            }

            static func contentLength(_ head: Substring) -> Int? {
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
            }
        }

        func upload(_ url: String, name: String, token: String, bytes: [UInt8]) async throws -> (Int, String, HTTPURLResponse?) {
            var request = URLRequest(url: URL(string: "\(url)/v0/b/spots/o/\(name)")!)
            request.httpMethod = "PUT"
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (data, response) = try await URLSession.shared.upload(for: request, from: Data(bytes))
            let http = response as? HTTPURLResponse
            return (http?.statusCode ?? 0, String(decoding: data, as: UTF8.self), http)
        }

        func metric(_ url: String, _ name: String) async -> Double? {
            guard let (data, _) = try? await URLSession.shared.data(from: URL(string: "\(url)/metrics")!) else { return nil }
            return String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(name + " ") }
                .flatMap { Double($0.split(separator: " ")[1]) }
        }

        /// A server on a new store (alice's token, log at info in a file) with one upload of
        /// `spots/NAME/paris.jpg` in flight: its head and half its body sent.
        struct HalfUpload {
            let store: String
            let server: Process
            let url: String
            let token: String
            let logPath: String
            let log: FileHandle
            let connection: RawConnection
            let photo: [UInt8]
        }

        func startWithHalfUpload(_ name: String, arguments: [String] = []) async throws -> HalfUpload {
            let root = NSTemporaryDirectory() + "spotstore-shutdown-\(UUID().uuidString)"
            let store = root + "/storage"
            let added = try BinaryTests.run(["users", "add", "alice", "--store", store])
            #expect(added.status == 0)
            let token = try #require(added.stdout.split(separator: "\n").last.map(String.init))
            let logPath = root + "/server.log"
            FileManager.default.createFile(atPath: logPath, contents: nil)
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            let (server, url) = try await BinaryTests.startServer(store: store, arguments: ["--log-level", "info"] + arguments, log: log)
            let port = try #require(Int(url.split(separator: ":").last!))
            let photo = try fixture("geotagged/paris.jpg")
            let connection = try RawConnection(port: port)
            let head = "PUT /v0/b/spots/o/\(name)%2Fparis.jpg HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Type: image/jpeg\r\nContent-Length: \(photo.count)\r\nX-Request-Id: \(name)-upload-1\r\n\r\n"
            try connection.send(Array(head.utf8) + photo[..<(photo.count / 2)])
            let inFlight = try await RulesCommandTests.eventually(within: .seconds(10)) { await metric(url, "spotstore_uploads_in_flight") == 1 }
            #expect(inFlight, "the upload is in flight")
            return HalfUpload(store: store, server: server, url: url, token: token, logPath: logPath, log: log, connection: connection, photo: photo)
        }

        @Test func sigtermDrainsUploadsRefusesNewOnesAndExitsZero() async throws {
            // A slow upload: the head and half the body now, the rest after SIGTERM.
            let started = try await startWithHalfUpload("slow")
            let (server, url, token, store, log, logPath, photo, slow) = (
                started.server, started.url, started.token, started.store, started.log, started.logPath, started.photo, started.connection)
            defer { if server.isRunning { server.terminate() } }

            kill(server.processIdentifier, SIGTERM)
            // Attempts made before the signal is handled are still accepted, so each has its own name.
            var refused: (Int, String, HTTPURLResponse?) = (0, "", nil)
            var attempt = 0
            let refusedInTime = try await RulesCommandTests.eventually(within: .seconds(10)) {
                attempt += 1
                refused = try await upload(url, name: "late-\(attempt)%2Fparis.jpg", token: token, bytes: photo)
                return refused.0 == 503
            }
            #expect(refusedInTime, "a new upload gets 503 while draining (last: \(refused.0) \(refused.1))")
            #expect(refused.1.contains("shutting down"))
            #expect(refused.2?.value(forHTTPHeaderField: "Retry-After") != nil)
            #expect(server.isRunning, "the server waits for the slow upload")
            let (_, health) = try await URLSession.shared.data(from: URL(string: "\(url)/healthz")!)
            #expect((health as? HTTPURLResponse)?.statusCode == 200, "GETs are still served while draining")

            try slow.send(Array(photo[(photo.count / 2)...]))
            let response = slow.receiveResponse()
            #expect(response.hasPrefix("HTTP/1.1 200"), "the in-flight upload completes: \(response.prefix(300))")
            #expect(response.contains("slow/paris.jpg"))

            let exited = try await RulesCommandTests.eventually(within: .seconds(20)) { !server.isRunning }
            #expect(exited, "the server exits after the drain")
            #expect(!server.isRunning)
            if !server.isRunning {
                #expect(server.terminationReason == .exit && server.terminationStatus == 0)
            }
            try log.close()

            // The log: one line per request, each with its request id; the drain is logged.
            let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
            let requestLines = lines.filter { $0.contains(" request") && $0.contains("route=") }
            #expect(!requestLines.isEmpty)
            #expect(requestLines.allSatisfy { $0.contains("request_id=") }, "\(requestLines.filter { !$0.contains("request_id=") })")
            #expect(requestLines.contains { $0.contains("request_id=slow-upload-1") && $0.contains("status=200") && $0.contains("method=PUT") })
            #expect(lines.contains { $0.contains("new uploads get 503") })

            // After a restart the accepted upload is there and the refused one is not.
            let (again, againURL) = try await BinaryTests.startServer(store: store)
            defer { again.terminate() }
            var get = URLRequest(url: URL(string: "\(againURL)/v0/b/spots/o/slow%2Fparis.jpg?alt=media")!)
            get.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (stored, _) = try await URLSession.shared.data(for: get)
            #expect([UInt8](stored) == photo)
            var late = URLRequest(url: URL(string: "\(againURL)/v0/b/spots/o/late-\(attempt)%2Fparis.jpg")!)
            late.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (_, lateResponse) = try await URLSession.shared.data(for: late)
            #expect((lateResponse as? HTTPURLResponse)?.statusCode == 404)
        }
    


        @Test func drainTimeoutStopsTheServerWithAnUploadStillInFlight() async throws {
            // An upload that never finishes: half its body, then silence.
            let started = try await startWithHalfUpload("stuck", arguments: ["--drain-timeout", "2s"])
            let (server, token, store, log, logPath) = (started.server, started.token, started.store, started.log, started.logPath)
            defer { if server.isRunning { server.terminate() } }

            let signalled = ContinuousClock.now
            kill(server.processIdentifier, SIGTERM)
            let exited = try await RulesCommandTests.eventually(within: .seconds(30)) { !server.isRunning }
            #expect(exited, "the server stops after the drain timeout even though the upload never finished")
            #expect(ContinuousClock.now - signalled >= .seconds(2), "it waited for the upload first")
            try log.close()
            let text = try String(contentsOfFile: logPath, encoding: .utf8)
            #expect(text.contains("1 upload(s) still in flight after 2.0 seconds"), "\(text.suffix(800))")

            // The cut-off upload left nothing visible, and its temp file is swept at the next start.
            let (again, againURL) = try await BinaryTests.startServer(store: store)
            defer { again.terminate() }
            #expect(BinaryTests.temporaryFiles(in: store).isEmpty)
            var get = URLRequest(url: URL(string: "\(againURL)/v0/b/spots/o/stuck%2Fparis.jpg")!)
            get.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (_, response) = try await URLSession.shared.data(for: get)
            #expect((response as? HTTPURLResponse)?.statusCode == 404)
        }
    }
}

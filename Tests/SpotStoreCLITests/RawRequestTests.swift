import Foundation
import Testing
import TestSupport

extension BinaryTests {
    /// Requests written byte by byte, for what HTTP clients do not normally send.
    @Suite struct RawRequestTests {
        /// A new store with alice, and a server on it: (server, port, alice's token).
        func serve(_ arguments: [String] = []) async throws -> (Process, Int, String) {
            let store = NSTemporaryDirectory() + "spotstore-raw-\(UUID().uuidString)"
            let added = try BinaryTests.run(["users", "add", "alice", "--store", store])
            let token = try #require(added.stdout.split(separator: "\n").last.map(String.init))
            let (server, url) = try await BinaryTests.startServer(store: store, arguments: arguments)
            return (server, try #require(Int(url.split(separator: ":").last!)), token)
        }

        /// The bytes of an HTTP/1.1 request: request line, `Host`, `Authorization` when
        /// `token` is given, `headers` (each line ending in CRLF), the blank line, `body`.
        static func request(_ method: String, _ target: String, token: String? = nil, headers: String = "", body: String = "") -> [UInt8] {
            let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
            return Array("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(authorization)\(headers)\r\n\(body)".utf8)
        }

        /// `Expect: 100-continue` (curl sends it for bodies over 1 MiB) is answered at once.
        @Test func anUploadAskingToContinueIsToldToAtOnce() async throws {
            let (server, port, token) = try await serve()
            defer { server.terminate() }
            let body = randomBytes(2 * 1024 * 1024)

            let connection = try ShutdownTests.RawConnection(port: port)
            try connection.send(Self.request(
                "PUT", "/v0/b/media/o/alice%2Fbig.bin", token: token, headers: "Content-Length: \(body.count)\r\nExpect: 100-continue\r\n"))
            let interim = connection.receiveResponse(limit: 2)
            #expect(interim.hasPrefix("HTTP/1.1 100 Continue\r\n"), "\(interim.prefix(200))")
            try connection.send(body)
            let final = connection.receiveResponse()
            #expect(final.hasPrefix("HTTP/1.1 200"), "\(final.prefix(300))")
            #expect(final.contains("alice/big.bin"))
        }

        /// Broken framing is the client's fault: 400, and the server keeps serving.
        @Test func aMalformedChunkedBodyGets400() async throws {
            let (server, port, token) = try await serve()
            defer { server.terminate() }
            let connection = try ShutdownTests.RawConnection(port: port)
            try connection.send(Self.request(
                "PUT", "/v0/b/media/o/alice%2Fchunked.bin", token: token, headers: "Transfer-Encoding: chunked\r\n", body: "5\r\nhello\r\nzz\r\n"))
            let answer = connection.receiveResponse()
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(300))")
            #expect(answer.contains("not valid HTTP"))
            let next = try ShutdownTests.RawConnection(port: port)
            try next.send(Self.request("GET", "/healthz"))
            #expect(next.receiveResponse().hasPrefix("HTTP/1.1 200"))
        }

        /// Only chunked framing is undone: a body in another transfer coding would be stored
        /// still encoded, so it is refused (it was stored, gzip bytes and all), and nothing is stored.
        @Test func aTransferCodingOtherThanChunkedGets400() async throws {
            let (server, port, token) = try await serve()
            defer { server.terminate() }
            let connection = try ShutdownTests.RawConnection(port: port)
            try connection.send(Self.request(
                "PUT", "/v0/b/media/o/alice%2Fcoded.bin", token: token, headers: "Transfer-Encoding: gzip, chunked\r\n", body: "3\r\nabc\r\n0\r\n\r\n"))
            let answer = connection.receiveResponse()
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(300))")
            #expect(answer.contains("transfer coding 'gzip, chunked' is not supported"), "\(answer.prefix(300))")
            let check = try ShutdownTests.RawConnection(port: port)
            try check.send(Self.request("GET", "/v0/b/media/o/alice%2Fcoded.bin", token: token))
            #expect(check.receiveResponse().hasPrefix("HTTP/1.1 404"))
        }

        /// An expectation other than 100-continue cannot be met: 417, the request and its body
        /// are dropped (nothing is stored), and the connection serves the next request.
        @Test func anExpectationOtherThanContinueGets417() async throws {
            let (server, port, token) = try await serve()
            defer { server.terminate() }
            let connection = try ShutdownTests.RawConnection(port: port)
            try connection.send(Self.request(
                "PUT", "/v0/b/media/o/alice%2Fexpected.bin", token: token, headers: "Content-Length: 5\r\nExpect: 200-ok\r\n", body: "hello"))
            let answer = connection.receiveResponse()
            #expect(answer.hasPrefix("HTTP/1.1 417"), "\(answer.prefix(300))")
            #expect(answer.contains("the expectation '200-ok' is not supported"), "\(answer.prefix(300))")
            try connection.send(Self.request("GET", "/v0/b/media/o/alice%2Fexpected.bin", token: token))
            let next = connection.receiveResponse()
            #expect(next.hasPrefix("HTTP/1.1 404"), "\(next.prefix(300))")
        }

        /// A connection that sends nothing, or stops halfway through a request head or body,
        /// is closed after `--idle-timeout`; one whose answer is still being read is not, however
        /// slowly the client reads.
        @Test func idleConnectionsAreClosedButSlowReadersAreNot() async throws {
            let (server, port, token) = try await serve(["--idle-timeout", "1s"])
            defer { server.terminate() }
            let silent = try ShutdownTests.RawConnection(port: port)
            let halfHead = try ShutdownTests.RawConnection(port: port)
            try halfHead.send(Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8))
            let halfBody = try ShutdownTests.RawConnection(port: port)
            try halfBody.send(Self.request("PUT", "/v0/b/media/o/alice%2Fhalf.bin", token: token, headers: "Content-Length: 10\r\n", body: "half"))
            for connection in [silent, halfHead, halfBody] {
                #expect(connection.receiveUntilClosed(limit: 30).closed)
            }

            let bytes = randomBytes(24 * 1024 * 1024)
            let upload = try ShutdownTests.RawConnection(port: port)
            try upload.send(Self.request("PUT", "/v0/b/media/o/alice%2Fbig.bin", token: token, headers: "Content-Length: \(bytes.count)\r\n") + bytes)
            #expect(upload.receiveResponse().hasPrefix("HTTP/1.1 200"))
            let download = try ShutdownTests.RawConnection(port: port)
            try download.send(Self.request("GET", "/v0/b/media/o/alice%2Fbig.bin?alt=media", token: token, headers: "Connection: close\r\n"))
            // The server fills the socket buffers, then waits on this client for longer than the timeout.
            try await Task.sleep(for: .seconds(3))
            let answer = download.receiveUntilClosed().bytes
            let head = try #require(answer.firstRange(of: Array("\r\n\r\n".utf8)))
            #expect(String(decoding: answer[..<head.lowerBound], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            #expect(Array(answer[head.upperBound...]) == bytes)
        }

        /// A thumbnail answered again without the router never overtakes an earlier request
        /// on the same connection, and stops the moment another process revokes the token.
        @Test func keptThumbnailAnswersKeepTheirOrderAndEndWithARevocation() async throws {
            let store = NSTemporaryDirectory() + "spotstore-raw-\(UUID().uuidString)"
            let token = try #require(try BinaryTests.run(["users", "add", "alice", "--store", store]).stdout.split(separator: "\n").last.map(String.init))
            let (server, url) = try await BinaryTests.startServer(store: store)
            defer { server.terminate() }
            let connection = try ShutdownTests.RawConnection(port: try #require(Int(url.split(separator: ":").last!)))
            let photo = try fixture("geotagged/san-francisco.jpg")
            try connection.send(Self.request("PUT", "/v0/b/spots/o/a%2Fgate.jpg", token: token, headers: "Content-Length: \(photo.count)\r\n") + photo)
            #expect(connection.receiveResponse().hasPrefix("HTTP/1.1 200"))
            let thumbnail = "/v0/b/spots/o/a%2Fgate.jpg?alt=thumbnail&size=256"
            for _ in 0..<2 {
                try connection.send(Self.request("GET", thumbnail, token: token))
                #expect(connection.receiveResponse().hasPrefix("HTTP/1.1 200"))
            }
            try connection.send(Self.request("GET", "/metrics"))
            #expect(connection.receiveResponse().contains("spotstore_kept_thumbnail_answers_total 1\n"))

            // Pipelined: a listing, then the thumbnail, then a health check that closes.
            try connection.send(
                Self.request("GET", "/v0/b/spots/o?prefix=a/", token: token, headers: "X-Request-Id: first\r\n")
                    + Self.request("GET", thumbnail, token: token, headers: "X-Request-Id: second\r\n")
                    + Self.request("GET", "/healthz", headers: "X-Request-Id: third\r\nConnection: close\r\n"))
            let answers = String(decoding: connection.receiveUntilClosed().bytes, as: UTF8.self)
            let order = ["first", "second", "third"].map { answers.range(of: "x-request-id: \($0)\r\n", options: .caseInsensitive)?.lowerBound }
            #expect(order.allSatisfy { $0 != nil } && order == order.sorted { $0! < $1! }, "\(answers.prefix(600))")

            #expect(try BinaryTests.run(["users", "revoke", "alice", "--store", store]).status == 0)
            let after = try ShutdownTests.RawConnection(port: try #require(Int(url.split(separator: ":").last!)))
            try after.send(Self.request("GET", thumbnail, token: token))
            #expect(after.receiveResponse().hasPrefix("HTTP/1.1 401"))
        }
    }
}

import Foundation
import Testing
import TestSupport

extension BinaryTests {
    /// Requests written byte by byte, for what HTTP clients do not normally send.
    @Suite struct RawRequestTests {
        /// A new store with alice, and a server on it: (server, port, alice's token).
        func serve() async throws -> (Process, Int, String) {
            let store = NSTemporaryDirectory() + "spotstore-raw-\(UUID().uuidString)"
            let added = try BinaryTests.run(["users", "add", "alice", "--store", store])
            let token = try #require(added.stdout.split(separator: "\n").last.map(String.init))
            let (server, url) = try await BinaryTests.startServer(store: store)
            return (server, try #require(Int(url.split(separator: ":").last!)), token)
        }

        /// `Expect: 100-continue` (curl sends it for bodies over 1 MiB) is answered at once.
        @Test func anUploadAskingToContinueIsToldToAtOnce() async throws {
            let (server, port, token) = try await serve()
            defer { server.terminate() }
            let body = randomBytes(2 * 1024 * 1024)

            let connection = try ShutdownTests.RawConnection(port: port)
            try connection.send(Array(("PUT /v0/b/media/o/alice%2Fbig.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Length: \(body.count)\r\nExpect: 100-continue\r\n\r\n").utf8))
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
            try connection.send(Array(("PUT /v0/b/media/o/alice%2Fchunked.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n").utf8))
            let answer = connection.receiveResponse()
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(300))")
            #expect(answer.contains("not valid HTTP"))
            let next = try ShutdownTests.RawConnection(port: port)
            try next.send(Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            #expect(next.receiveResponse().hasPrefix("HTTP/1.1 200"))
        }

        /// Only chunked framing is undone: a body in another transfer coding would be stored
        /// still encoded, so it is refused (it was stored, gzip bytes and all), and nothing is stored.
        @Test func aTransferCodingOtherThanChunkedGets400() async throws {
            let (server, port, token) = try await serve()
            defer { server.terminate() }
            let connection = try ShutdownTests.RawConnection(port: port)
            try connection.send(Array(("PUT /v0/b/media/o/alice%2Fcoded.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                + "Transfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n").utf8))
            let answer = connection.receiveResponse()
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(300))")
            #expect(answer.contains("transfer coding 'gzip, chunked' is not supported"), "\(answer.prefix(300))")
            let check = try ShutdownTests.RawConnection(port: port)
            try check.send(Array("GET /v0/b/media/o/alice%2Fcoded.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8))
            #expect(check.receiveResponse().hasPrefix("HTTP/1.1 404"))
        }
    }
}

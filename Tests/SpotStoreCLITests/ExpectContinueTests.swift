import Foundation
import Testing
import TestSupport

extension BinaryTests {
    /// `Expect: 100-continue` (curl sends it for bodies over 1 MiB) is answered at once.
    @Suite struct ExpectContinueTests {
        @Test func anUploadAskingToContinueIsToldToAtOnce() async throws {
            let store = NSTemporaryDirectory() + "spotstore-continue-\(UUID().uuidString)"
            let added = try BinaryTests.run(["users", "add", "alice", "--store", store])
            let token = try #require(added.stdout.split(separator: "\n").last.map(String.init))
            let (server, url) = try await BinaryTests.startServer(store: store)
            defer { server.terminate() }
            let port = try #require(Int(url.split(separator: ":").last!))
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
    }
}

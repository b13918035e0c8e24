import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import SpotCore
import SpotServer
import SpotService
import Testing
import TestSupport

/// Clients holding the server's resources with uploads: a body trickling in, too many
/// uploads at once, too many unfinished resumable sessions.
@Suite struct UploadLimitTests {
    func app(_ store: TestStore, gate: UploadGate, configuration: ServerConfiguration = .init(host: "127.0.0.1", port: 0)) -> some ApplicationProtocol {
        SpotServer.makeApplication(service: store.service, configuration: configuration, logger: Logger(label: "test"), gate: gate)
    }

    /// The head of a `PUT` of `length` bytes to `name` in bucket `spots` by the holder of `token`.
    static func putHead(_ name: String, token: String, length: Int) -> String {
        "PUT /v0/b/spots/o/\(name) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nContent-Length: \(length)\r\n\r\n"
    }

    /// A body bringing a byte now and then (under 1,000 bytes in 5 s: long enough for a loaded machine to store the first bytes before the cut) is answered 408,
    /// its connection closed and its temp file removed.
    @Test func aTricklingBodyIsCutAndItsTempFileRemoved() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let gate = UploadGate()
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, minimumBodyRate: .init(bytes: 1000, window: .seconds(5)))
        try await app(store, gate: gate, configuration: configuration).test(.live) { client in
            let connection = try RawHTTPConnection(port: try #require(client.port))
            try await connection.send(Self.putHead("bay%2Fslow.jpg", token: token, length: 100_000), [0xFF, 0xD8])
            let receiving = try await waitUntil {
                let files = try store.temporaryFiles()
                return gate.inFlight == 1 && !files.isEmpty
            }
            #expect(receiving, "the body goes into a temp file")
            // A byte now and then; under load the window may end first, and the server's
            // close then refuses them: the answer below is what counts.
            for _ in 0..<3 { try? await connection.send([0]) }
            let (head, body) = try await connection.receiveResponse(limit: 10)
            #expect(head.status == 408, "\(head) \(String(decoding: body, as: UTF8.self))")
            #expect(String(decoding: body, as: UTF8.self).contains("slower than 1000 bytes"))
            let closed = await #expect(throws: SpotError.self) { try await connection.receiveHead(limit: 10) }
            #expect(closed?.kind == .internal && closed?.message.hasPrefix("the connection ended") == true, "the server closed the connection: \(closed?.message ?? "")")
            #expect(try await waitUntil { gate.inFlight == 0 })
            #expect(try store.temporaryFiles().isEmpty)
        }
    }

    /// A body faster than the minimum is not cut, however long it takes in all.
    @Test func aBodyAboveTheMinimumRateIsStored() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let photo = try fixture("geotagged/sydney.jpg")
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, minimumBodyRate: .init(bytes: 1000, window: .seconds(2)))
        try await app(store, gate: UploadGate(), configuration: configuration).test(.live) { client in
            let connection = try RawHTTPConnection(port: try #require(client.port))
            try await connection.send(Self.putHead("bay%2Ffast.jpg", token: token, length: photo.count))
            for start in stride(from: 0, to: photo.count, by: 64 << 10) { try await connection.send(Array(photo[start..<min(photo.count, start + (64 << 10))])) }
            let (head, body) = try await connection.receiveResponse(limit: 120)
            #expect(head.status == 200, "\(head) \(String(decoding: body, as: UTF8.self))")
        }
    }

    /// Past `maxPerClient` uploads in flight, a user's next upload gets 429 with
    /// `Retry-After`; another user's is taken, and so is the first user's once one ended.
    @Test func uploadsPastTheClientsCapGet429() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let photo = try fixture("geotagged/sydney.jpg")
        let gate = UploadGate(maxPerClient: 1)
        try await app(store, gate: gate).test(.live) { client in
            let open = try RawHTTPConnection(port: try #require(client.port))
            try await open.send(Self.putHead("bay%2Fopen.jpg", token: alice, length: photo.count), Array(photo.prefix(100)))
            #expect(try await waitUntil { gate.inFlight == 1 })
            func put(_ name: String, _ token: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/v0/b/spots/o/\(name)", method: .put, headers: [.authorization: "Bearer \(token)"], body: ByteBuffer(bytes: photo))
            }
            let refused = try await put("bay%2Fsecond.jpg", alice)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] != nil)
            #expect(String(buffer: refused.body).contains("uploads are in progress"), "\(String(buffer: refused.body))")
            #expect(try await put("cove%2Fbob.jpg", bob).status == .ok, "another user's count is their own")
            // A session's URL needs no token: its bytes still count against its owner.
            let session = try await TusHTTPTests.create(client, alice, name: "alice/a.bin", length: 100)
            #expect(session.status == .created)
            let tokenless = try await TusHTTPTests.patch(client, try TusHTTPTests.path(of: session.headers[.location]), nil, at: 0, Array(photo.prefix(100)))
            #expect(tokenless.status == .tooManyRequests, "\(String(buffer: tokenless.body))")
            try await open.send(Array(photo.dropFirst(100)))
            #expect(try await open.receiveResponse().head.status == 200)
            #expect(try await put("bay%2Fsecond.jpg", alice).status == .ok)
        }
    }

    /// Past `maxOpenUploadSessions` unfinished sessions, a user's next one gets 429 saying
    /// what to do; cancelling one makes room.
    @Test func resumableSessionsPastTheUsersCapGet429() async throws {
        let store = try TestStore(maxOpenUploadSessions: 2)
        let (_, token) = try await store.user("alice")
        try await app(store, gate: UploadGate()).test(.router) { client in
            let first = try await TusHTTPTests.create(client, token, name: "alice/a.bin", length: 1000)
            #expect(first.status == .created)
            #expect(try await TusHTTPTests.create(client, token, name: "alice/b.bin", length: 1000).status == .created)
            let refused = try await TusHTTPTests.create(client, token, name: "alice/c.bin", length: 1000)
            #expect(refused.status == .tooManyRequests)
            #expect(String(buffer: refused.body).contains("2 unfinished resumable uploads"), "\(String(buffer: refused.body))")
            let cancel = try await client.execute(
                uri: try TusHTTPTests.path(of: first.headers[.location]), method: .delete, headers: TusHTTPTests.tus(token))
            #expect(cancel.status == .noContent)
            #expect(try await TusHTTPTests.create(client, token, name: "alice/c.bin", length: 1000).status == .created)
        }
    }
}

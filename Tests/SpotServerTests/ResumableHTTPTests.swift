import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SpotCore
import SpotServer
import SpotService
import Testing
import TestSupport

/// Resumable uploads the IETF draft's way (draft-ietf-httpbis-resumable-upload, interop
/// versions 3 and 6) on a live server: the `104` comes from a channel handler, before the
/// body is read, so these requests are written by hand on a socket that the test cuts.
@Suite struct ResumableHTTPTests {
    static let interopVersion = HTTPField.Name("Upload-Draft-Interop-Version")!
    static let uploadComplete = HTTPField.Name("Upload-Complete")!
    static let uploadIncomplete = HTTPField.Name("Upload-Incomplete")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!

    func app(_ service: StorageService, gate: UploadGate) -> some ApplicationProtocol {
        SpotServer.makeApplication(service: service, configuration: .init(host: "127.0.0.1", port: 0), logger: Logger(label: "test"), gate: gate)
    }

    /// The head of an upload of `length` bytes to `target` by the holder of `token`, with
    /// the draft's headers `draft` (each line ending in CRLF) and `extra` ones.
    static func creationHead(_ target: String, port: Int, token: String, length: Int, draft: String, extra: String = "") -> String {
        "PUT \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Type: application/octet-stream\r\nContent-Length: \(length)\r\n\(draft)\(extra)\r\n"
    }

    /// Sends `head`, reads the `104 Upload Resumption Supported` (before sending any body
    /// byte: it must come before the body is read), then sends `part` of the body and cuts
    /// the connection once the server is receiving it. Returns the 104's `Location` when the
    /// server has dealt with the cut.
    static func cutUpload(_ head: String, _ part: [UInt8], port: Int, gate: UploadGate, version: String) async throws -> String {
        let connection = try RawHTTPConnection(port: port)
        try await connection.send(head)
        let interim = try await connection.receiveHead()
        #expect(interim.status == 104, "\(interim)")
        #expect(interim.statusLine.hasSuffix("Upload Resumption Supported"), "\(interim.statusLine)")
        #expect(interim["upload-draft-interop-version"] == version)
        let location = try #require(interim["location"], "\(interim)")
        try await connection.send(part)
        #expect(try await waitUntil { gate.inFlight == 1 }, "the upload is being received")
        connection.close()
        #expect(try await waitUntil { gate.inFlight == 0 }, "the server noticed the connection was cut")
        return location
    }

    /// The path of an upload URL, for the test client.
    static func path(of location: String) throws -> String {
        let start = try #require(location.range(of: "/v0/"), "\(location)")
        return String(location[start.lowerBound...])
    }

    static func auth(_ token: String, _ extra: HTTPFields = [:]) -> HTTPFields {
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        headers.append(contentsOf: extra)
        return headers
    }

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any], "\(String(buffer: response.body))")
    }

    static func media(_ client: some TestClientProtocol, _ uri: String, _ token: String) async throws -> (HTTPResponse.Status, [UInt8]) {
        let response = try await client.execute(uri: uri, method: .get, headers: auth(token))
        return (response.status, Array(buffer: response.body))
    }

    /// v6: the connection drops half way; the offset asked on the URL of the `104` is where
    /// the bytes that arrived end, and a `PATCH` of the rest (sent to another instance on the
    /// same store) completes the upload with the object's metadata.
    @Test(arguments: TestStore.SessionBytes.allCases)
    func aV6UploadCutHalfWayIsFinishedWithAPatchOnAnotherInstance(_ sessionBytes: TestStore.SessionBytes) async throws {
        let store = try TestStore(sessionBytes: sessionBytes)
        let (_, token) = try await store.user("alice")
        let bytes = randomBytes(700_001)
        let half = bytes.count / 2
        let gate = UploadGate()
        let other = try store.otherInstance("b")
        try await app(store.service, gate: gate).test(.live) { client in
            let port = try #require(client.port)
            let head = Self.creationHead(
                "/v0/b/media/o/alice%2Fclip.mov", port: port, token: token, length: bytes.count,
                draft: "Upload-Draft-Interop-Version: 6\r\nUpload-Complete: ?1\r\n")
            let location = try await Self.cutUpload(head, Array(bytes[..<half]), port: port, gate: gate, version: "6")
            #expect(location.hasPrefix("http://127.0.0.1:\(port)/v0/uploads/"), "\(location)")
            let upload = try Self.path(of: location)

            let offset = try await client.execute(uri: upload, method: .head, headers: Self.auth(token, [Self.interopVersion: "6"]))
            #expect(offset.status == .noContent || offset.status == .ok, "\(offset.status)")
            #expect(offset.headers[Self.uploadOffset] == String(half), "the bytes that arrived are kept")
            #expect(offset.headers[Self.uploadComplete] == "?0")
            #expect(offset.headers[.cacheControl] == "no-store")
            #expect(try await Self.media(client, "/v0/b/media/o/alice%2Fclip.mov", token).0 == .notFound, "nothing is stored yet")

            try await app(other, gate: UploadGate()).test(.live) { second in
                let rest = try await second.execute(
                    uri: upload, method: .patch,
                    headers: Self.auth(token, [
                        Self.interopVersion: "6", Self.uploadOffset: String(half), Self.uploadComplete: "?1",
                        .contentType: "application/partial-upload",
                    ]),
                    body: ByteBuffer(bytes: bytes[half...]))
                #expect(rest.status == .ok, "\(String(buffer: rest.body))")
                #expect(rest.headers[Self.uploadComplete] == "?1")
                #expect(rest.headers[Self.uploadOffset] == String(bytes.count))
                let metadata = try Self.json(rest)
                #expect(metadata["name"] as? String == "alice/clip.mov")
                #expect(metadata["size"] as? Int == bytes.count)
                #expect(metadata["sha256"] as? String == hexSHA256(bytes))
                #expect(metadata["contentType"] as? String == "application/octet-stream", "the creation's type, not the PATCH's")
            }
            let (status, stored) = try await Self.media(client, "/v0/b/media/o/alice%2Fclip.mov?alt=media", token)
            #expect(status == .ok && stored.count == bytes.count && hexSHA256(stored) == hexSHA256(bytes), "the file's exact bytes")
            let after = try await client.execute(uri: upload, method: .head, headers: Self.auth(token, [Self.interopVersion: "6"]))
            #expect(after.status == .noContent && after.headers[Self.uploadComplete] == "?1", "the finished upload says it is complete")
            #expect(try store.temporaryFiles().isEmpty)
            #expect((try await store.heldUploadBytes()).count == 1, "the object's blob only: the session's bytes are removed")
        }
    }

    /// Not cut: the client still gets the `104`, then the object's metadata.
    @Test func aV6UploadSentWholeGets104ThenTheMetadata() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let photo = try fixture("geotagged/sydney.jpg")
        try await app(store.service, gate: UploadGate()).test(.live) { client in
            let port = try #require(client.port)
            let connection = try RawHTTPConnection(port: port)
            try await connection.send(
                Self.creationHead("/v0/b/spots/o/opera%2Fhouse.jpg", port: port, token: token, length: photo.count,
                                  draft: "Upload-Draft-Interop-Version: 6\r\nUpload-Complete: ?1\r\n"),
                photo)
            let interim = try await connection.receiveHead()
            #expect(interim.status == 104)
            let (final, body) = try await connection.receiveResponse()
            #expect(final.status == 200, "\(final) \(String(decoding: body, as: UTF8.self))")
            #expect(final["upload-complete"] == "?1")
            let metadata = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            #expect(metadata["sha256"] as? String == hexSHA256(photo))
            #expect(metadata["contentType"] as? String == "image/jpeg", "sniffed, not the claimed octet-stream")
            #expect((metadata["photo"] as? [String: Any])?["location"] != nil)
            let upload = try Self.path(of: try #require(interim["location"]))
            let after = try await client.execute(uri: upload, method: .head, headers: Self.auth(token, [Self.interopVersion: "6"]))
            #expect(after.status == .noContent, "the finished upload says it is complete")
            #expect(after.headers[Self.uploadComplete] == "?1" && after.headers[Self.uploadOffset] == String(photo.count))
        }
    }

    /// A resumable upload pipelined behind a download on one connection: its 104 comes after
    /// the download's whole response, never inside it or before it.
    @Test func aPipelinedUploadsAnnouncementWaitsForTheResponseBeforeIt() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let big = randomBytes(3 << 20)
        let small = randomBytes(1000)
        try await app(store.service, gate: UploadGate()).test(.live) { client in
            let put = try await client.execute(
                uri: "/v0/b/media/o/alice%2Fbig.bin", method: .put, headers: Self.auth(token), body: ByteBuffer(bytes: big))
            #expect(put.status == .ok)
            let port = try #require(client.port)
            let connection = try RawHTTPConnection(port: port)
            let get = "GET /v0/b/media/o/alice%2Fbig.bin?alt=media HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(token)\r\n\r\n"
            let upload = Self.creationHead("/v0/b/media/o/alice%2Fsmall.bin", port: port, token: token, length: small.count,
                                           draft: "Upload-Draft-Interop-Version: 6\r\nUpload-Complete: ?1\r\n")
            try await connection.send(Array(get.utf8) + Array(upload.utf8) + small)
            let first = try await connection.receiveHead()
            #expect(first.status == 200, "the download's answer comes first, not \(first)")
            #expect(try await connection.receiveBody(of: first) == big, "its body is whole, with nothing inside it")
            #expect(try await connection.receiveHead().status == 104)
            let (final, _) = try await connection.receiveResponse()
            #expect(final.status == 200)
            connection.close()
        }
    }

    /// v3 says the same with `Upload-Incomplete` (`?1` while bytes are to follow).
    @Test func aV3UploadIsResumedWithUploadIncomplete() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = randomBytes(300_000)
        let gate = UploadGate()
        try await app(store.service, gate: gate).test(.live) { client in
            let port = try #require(client.port)
            let head = Self.creationHead(
                "/v0/b/media/o/alice%2Fv3.bin", port: port, token: token, length: bytes.count,
                draft: "Upload-Draft-Interop-Version: 3\r\nUpload-Incomplete: ?0\r\n")
            let upload = try Self.path(of: try await Self.cutUpload(head, Array(bytes[..<100_000]), port: port, gate: gate, version: "3"))

            let offset = try await client.execute(uri: upload, method: .head, headers: Self.auth(token, [Self.interopVersion: "3"]))
            #expect(offset.headers[Self.uploadOffset] == "100000")
            #expect(offset.headers[Self.uploadIncomplete] == "?1")
            #expect(offset.headers[Self.uploadComplete] == nil, "v3 does not know Upload-Complete")

            let middle = try await client.execute(
                uri: upload, method: .patch, headers: Self.auth(token, [Self.interopVersion: "3", Self.uploadOffset: "100000", Self.uploadIncomplete: "?1"]),
                body: ByteBuffer(bytes: bytes[100_000..<200_000]))
            #expect(middle.status == .noContent || middle.status == .created, "\(middle.status) \(String(buffer: middle.body))")
            #expect(middle.headers[Self.uploadOffset] == "200000")
            #expect(middle.headers[Self.uploadIncomplete] == "?1")

            let last = try await client.execute(
                uri: upload, method: .patch, headers: Self.auth(token, [Self.interopVersion: "3", Self.uploadOffset: "200000", Self.uploadIncomplete: "?0"]),
                body: ByteBuffer(bytes: bytes[200_000...]))
            #expect(last.status == .ok, "\(String(buffer: last.body))")
            #expect(last.headers[Self.uploadIncomplete] == "?0")
            #expect(try Self.json(last)["sha256"] as? String == hexSHA256(bytes))
            #expect(try await Self.media(client, "/v0/b/media/o/alice%2Fv3.bin?alt=media", token) == (.ok, bytes))
        }
    }

    /// A creation that says more is to come (`Upload-Complete: ?0`) is kept whole (201 with
    /// the offset); a `PATCH` at another offset gets 409 with the offset held.
    @Test func aPatchAtTheWrongOffsetGets409WithTheOffsetHeld() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = randomBytes(200_000)
        try await app(store.service, gate: UploadGate()).test(.live) { client in
            let port = try #require(client.port)
            let connection = try RawHTTPConnection(port: port)
            try await connection.send(
                Self.creationHead("/v0/b/media/o/alice%2Fparts.bin", port: port, token: token, length: 80_000,
                                  draft: "Upload-Draft-Interop-Version: 6\r\nUpload-Complete: ?0\r\n"),
                Array(bytes[..<80_000]))
            let interim = try await connection.receiveHead()
            #expect(interim.status == 104)
            let location = try #require(interim["location"])
            let (created, _) = try await connection.receiveResponse()
            #expect(created.status == 201, "\(created)")
            #expect(created["location"] == location)
            #expect(created["upload-offset"] == "80000")
            #expect(created["upload-complete"] == "?0")
            let upload = try Self.path(of: location)

            for offset in [0, 40_000, 120_000] {
                let wrong = try await client.execute(
                    uri: upload, method: .patch,
                    headers: Self.auth(token, [Self.interopVersion: "6", Self.uploadOffset: String(offset), Self.uploadComplete: "?1", .contentType: "application/partial-upload"]),
                    body: ByteBuffer(bytes: bytes[80_000...]))
                #expect(wrong.status == .conflict, "PATCH at \(offset)")
                #expect(wrong.headers[Self.uploadOffset] == "80000", "PATCH at \(offset) is told where to go on")
            }
            let offset = try await client.execute(uri: upload, method: .head, headers: Self.auth(token, [Self.interopVersion: "6"]))
            #expect(offset.headers[Self.uploadOffset] == "80000", "the refused PATCHes changed nothing")
            let rest = try await client.execute(
                uri: upload, method: .patch,
                headers: Self.auth(token, [Self.interopVersion: "6", Self.uploadOffset: "80000", Self.uploadComplete: "?1", .contentType: "application/partial-upload"]),
                body: ByteBuffer(bytes: bytes[80_000...]))
            #expect(rest.status == .ok)
            #expect(try await Self.media(client, "/v0/b/media/o/alice%2Fparts.bin?alt=media", token) == (.ok, bytes))
        }
    }

    @Test(arguments: TestStore.SessionBytes.allCases)
    func deleteCancelsTheUploadAndRemovesItsBytes(_ sessionBytes: TestStore.SessionBytes) async throws {
        let store = try TestStore(sessionBytes: sessionBytes)
        let (_, token) = try await store.user("alice")
        let (_, bobToken) = try await store.user("bob")
        let bytes = randomBytes(300_000)
        let gate = UploadGate()
        try await app(store.service, gate: gate).test(.live) { client in
            let port = try #require(client.port)
            let head = Self.creationHead(
                "/v0/b/media/o/alice%2Fcancelled.bin", port: port, token: token, length: bytes.count,
                draft: "Upload-Draft-Interop-Version: 6\r\nUpload-Complete: ?1\r\n")
            let upload = try Self.path(of: try await Self.cutUpload(head, Array(bytes[..<100_000]), port: port, gate: gate, version: "6"))
            #expect(try await client.execute(uri: upload, method: .head, headers: Self.auth(token)).headers[Self.uploadOffset] == "100000")
            #expect(!(try await store.heldUploadBytes()).isEmpty)

            #expect(try await client.execute(uri: upload, method: .delete, headers: Self.auth(bobToken)).status == .forbidden, "only its owner cancels")
            #expect(try await client.execute(uri: upload, method: .delete, headers: Self.auth(token)).status == .noContent)
            #expect(try await client.execute(uri: upload, method: .head, headers: Self.auth(token)).status == .notFound)
            let late = try await client.execute(
                uri: upload, method: .patch, headers: Self.auth(token, [Self.interopVersion: "6", Self.uploadOffset: "100000", Self.uploadComplete: "?1"]),
                body: ByteBuffer(bytes: bytes[100_000...]))
            #expect(late.status == .notFound)
            #expect(try await Self.media(client, "/v0/b/media/o/alice%2Fcancelled.bin", token).0 == .notFound)
            #expect((try await store.heldUploadBytes()).isEmpty, "the kept bytes are removed")
        }
    }

    /// `X-SpotStore-Upload-Session` names the announced session between the channel handler
    /// and the router; a client sending it chooses nothing.
    @Test func aClientCannotChooseTheSessionID() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let chosen = String(repeating: "A", count: 43)
        let bytes = randomBytes(50_000)
        try await app(store.service, gate: UploadGate()).test(.live) { client in
            let port = try #require(client.port)
            let connection = try RawHTTPConnection(port: port)
            try await connection.send(
                Self.creationHead("/v0/b/media/o/alice%2Fchosen.bin", port: port, token: token, length: bytes.count,
                                  draft: "Upload-Draft-Interop-Version: 6\r\nUpload-Complete: ?1\r\n", extra: "X-SpotStore-Upload-Session: \(chosen)\r\n"),
                bytes)
            let interim = try await connection.receiveHead()
            #expect(interim.status == 104)
            let location = try #require(interim["location"])
            #expect(!location.contains(chosen), "\(location)")
            let (final, _) = try await connection.receiveResponse()
            #expect(final.status == 200)

            // Without the draft's headers it is a plain upload, stored at once: no session.
            let plain = try await client.execute(
                uri: "/v0/b/media/o/alice%2Fplain.bin", method: .put,
                headers: Self.auth(token, [HTTPField.Name("X-SpotStore-Upload-Session")!: chosen]), body: ByteBuffer(bytes: bytes))
            #expect(plain.status == .ok, "\(String(buffer: plain.body))")
            #expect(plain.headers[.location] == nil)

            // Nor with a completeness header alone, which would leave a session open.
            let half = try await client.execute(
                uri: "/v0/b/media/o/alice%2Fhalf.bin", method: .put,
                headers: Self.auth(token, [HTTPField.Name("X-SpotStore-Upload-Session")!: chosen, Self.uploadComplete: "?0"]), body: ByteBuffer(bytes: bytes))
            #expect(half.status == .ok, "\(String(buffer: half.body))")

            #expect(try await client.execute(uri: "/v0/uploads/\(chosen)", method: .head, headers: Self.auth(token)).status == .notFound)
            #expect(try await Self.media(client, "/v0/b/media/o/alice%2Fchosen.bin?alt=media", token) == (.ok, bytes))
            #expect(try await Self.media(client, "/v0/b/media/o/alice%2Fplain.bin?alt=media", token) == (.ok, bytes))
        }
    }
}

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

/// tus 1.0.0 at `/v0/b/{bucket}/uploads`: a real tus client (tuspy) over the network,
/// continued on another instance, and the protocol's edge cases request by request.
@Suite struct TusHTTPTests {
    static let tusResumable = HTTPField.Name("Tus-Resumable")!
    static let tusVersion = HTTPField.Name("Tus-Version")!
    static let tusExtension = HTTPField.Name("Tus-Extension")!
    static let tusChecksumAlgorithm = HTTPField.Name("Tus-Checksum-Algorithm")!
    static let uploadLength = HTTPField.Name("Upload-Length")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!
    static let uploadMetadata = HTTPField.Name("Upload-Metadata")!
    static let uploadExpires = HTTPField.Name("Upload-Expires")!
    static let uploadChecksum = HTTPField.Name("Upload-Checksum")!
    static let chunkType = "application/offset+octet-stream"

    func app(_ service: StorageService, gate: UploadGate = UploadGate()) -> some ApplicationProtocol {
        SpotServer.makeApplication(service: service, configuration: .init(host: "127.0.0.1", port: 0), logger: Logger(label: "test"), gate: gate)
    }

    /// `Authorization` and `Tus-Resumable: 1.0.0`, then `extra`.
    static func tus(_ token: String?, _ extra: HTTPFields = [:]) -> HTTPFields {
        var headers: HTTPFields = [tusResumable: "1.0.0"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        headers.append(contentsOf: extra)
        return headers
    }

    /// `Upload-Metadata` for `pairs`: `key base64(value)`, comma-separated.
    static func metadata(_ pairs: KeyValuePairs<String, String>) -> String {
        pairs.map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
    }

    /// The path of an upload URL (`…/v0/b/media/uploads/{id}`), for the test client.
    static func path(of location: String?) throws -> String {
        let location = try #require(location)
        let start = try #require(location.range(of: "/v0/"), "\(location)")
        return String(location[start.lowerBound...])
    }

    /// `POST /v0/b/{bucket}/uploads` creating an upload of `length` bytes named `name`;
    /// with `body`, creation-with-upload.
    static func create(
        _ client: some TestClientProtocol, _ token: String?, bucket: String = "media", name: String, length: Int,
        contentType: String? = nil, body: [UInt8]? = nil
    ) async throws -> TestResponse {
        var pairs = metadata(["objectName": name])
        if let contentType { pairs += "," + metadata(["contentType": contentType]) }
        var headers = tus(token, [uploadLength: String(length), uploadMetadata: pairs])
        if body != nil { headers[.contentType] = chunkType }
        return try await client.execute(
            uri: "/v0/b/\(bucket)/uploads", method: .post, headers: headers, body: body.map { ByteBuffer(bytes: $0) })
    }

    /// Creates an upload and returns the path of its URL; the creation must answer 201.
    static func started(
        _ client: some TestClientProtocol, _ token: String?, bucket: String = "media", name: String, length: Int, contentType: String? = nil
    ) async throws -> String {
        let response = try await create(client, token, bucket: bucket, name: name, length: length, contentType: contentType)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        return try path(of: response.headers[.location])
    }

    /// `PATCH` of `bytes` at `offset` (with `Upload-Checksum` when `checksum` is given).
    static func patch(
        _ client: some TestClientProtocol, _ upload: String, _ token: String?, at offset: Int, _ bytes: [UInt8],
        checksum: String? = nil, contentType: String = chunkType
    ) async throws -> TestResponse {
        var headers = tus(token, [uploadOffset: String(offset), .contentType: contentType])
        if let checksum { headers[uploadChecksum] = checksum }
        return try await client.execute(uri: upload, method: .patch, headers: headers, body: ByteBuffer(bytes: bytes))
    }

    /// The `Upload-Offset` a `HEAD` answers, or `nil` with its status when it is not 200.
    static func offset(_ client: some TestClientProtocol, _ upload: String, _ token: String?) async throws -> (HTTPResponse.Status, Int?) {
        let response = try await client.execute(uri: upload, method: .head, headers: tus(token))
        return (response.status, response.headers[uploadOffset].flatMap { Int($0) })
    }

    static func object(_ client: some TestClientProtocol, _ uri: String, _ token: String) async throws -> (HTTPResponse.Status, [UInt8]) {
        let response = try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"])
        return (response.status, Array(buffer: response.body))
    }

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
    }

    // MARK: a real tus client

    /// Whether `python3` can import tuspy's module.
    static let tuspyInstalled = PythonScripts.canImport("tusclient.client")

    /// tuspy as an app would drive it. `start ENDPOINT TOKEN FILE NAME CHUNK COUNT` creates an
    /// upload and sends COUNT chunks, then ends (the app went away); `resume URL TOKEN FILE
    /// CHUNK` asks the offset (`HEAD`, in the uploader's initializer) and sends the rest.
    /// Each prints one JSON line.
    static let tuspyScript = """
        import json, sys
        from tusclient import client
        mode, where, token, path = sys.argv[1:5]
        tus = client.TusClient(where, headers={"Authorization": "Bearer " + token})
        if mode == "start":
            name, chunk, count = sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
            uploader = tus.uploader(
                path, chunk_size=chunk, upload_checksum=True,
                metadata={"objectName": name, "contentType": "application/octet-stream"})
            for _ in range(count):
                uploader.upload_chunk()
            print(json.dumps({"url": uploader.url, "offset": uploader.offset}))
        else:
            uploader = tus.uploader(path, url=where, chunk_size=int(sys.argv[5]), upload_checksum=True)
            resumed_at = uploader.offset
            uploader.upload()
            print(json.dumps({"resumedAt": resumed_at, "offset": uploader.offset}))
        """

    /// Runs the tuspy script with `arguments` to its end and returns the JSON it printed.
    static func tuspy(_ arguments: [String], in directory: String) async throws -> [String: Any] {
        let script = "\(directory)/tus_client.py"
        if !FileManager.default.fileExists(atPath: script) { try tuspyScript.write(toFile: script, atomically: true, encoding: .utf8) }
        let (status, line, errors) = try await PythonScripts.run(script, arguments, in: directory)
        try #require(status == 0, "tuspy \(arguments.first ?? "") exited with \(status): \(errors)")
        let output = try #require(line, "tuspy printed nothing; stderr: \(errors)")
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
    }

    /// tuspy (checksums on, sha1) sends 2 of 4 chunks to one instance and stops; a second
    /// tuspy uploader asks another instance on the same store where the upload is and sends
    /// the rest there. The object has the file's exact bytes.
    @Test(.enabled(if: TestServers.required || tuspyInstalled, "needs python3 with tuspy (pip install tuspy)"), arguments: TestStore.SessionBytes.allCases)
    func tuspyUploadStoppedOnOneInstanceIsFinishedOnAnother(_ sessionBytes: TestStore.SessionBytes) async throws {
        try #require(Self.tuspyInstalled, "python3 with tuspy (module tusclient) is needed: pip install tuspy (bin/test-services installs it)")
        let store = try TestStore(sessionBytes: sessionBytes)
        let (_, token) = try await store.user("alice")
        let chunk = 256 * 1024
        let bytes = randomBytes(3 * chunk + 1000)
        let file = "\(store.root)/clip.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let other = try store.otherInstance("b")

        try await app(store.service).test(.live) { first in
            let firstPort = try #require(first.port)
            let started = try await Self.tuspy(
                ["start", "http://127.0.0.1:\(firstPort)/v0/b/media/uploads", token, file, "alice/clip.bin", String(chunk), "2"], in: store.root)
            let url = try #require(started["url"] as? String)
            #expect(url.hasPrefix("http://127.0.0.1:\(firstPort)/v0/b/media/uploads/"), "\(url)")
            #expect(started["offset"] as? Int == 2 * chunk)
            let upload = try Self.path(of: url)
            #expect(try await Self.object(first, "/v0/b/media/o/alice%2Fclip.bin", token).0 == .notFound, "nothing is stored before the last byte")

            try await app(other).test(.live) { second in
                let secondPort = try #require(second.port)
                let (status, offset) = try await Self.offset(second, upload, token)
                #expect(status == .ok && offset == 2 * chunk, "the other instance knows the upload: \(status) \(offset ?? -1)")
                let resumed = try await Self.tuspy(["resume", "http://127.0.0.1:\(secondPort)\(upload)", token, file, String(chunk)], in: store.root)
                #expect(resumed["resumedAt"] as? Int == 2 * chunk, "tuspy resumes where the first instance stopped")
                #expect(resumed["offset"] as? Int == bytes.count)

                let metadata = try Self.json(try await second.execute(
                    uri: "/v0/b/media/o/alice%2Fclip.bin", method: .get, headers: [.authorization: "Bearer \(token)"]))
                #expect(metadata["size"] as? Int == bytes.count)
                #expect(metadata["sha256"] as? String == hexSHA256(bytes))
                #expect(metadata["owner"] as? String == "alice")
            }
            let (status, stored) = try await Self.object(first, "/v0/b/media/o/alice%2Fclip.bin?alt=media", token)
            #expect(status == .ok)
            #expect(stored.count == bytes.count && hexSHA256(stored) == hexSHA256(bytes), "the first instance serves the file's exact bytes")
            #expect(try await Self.offset(first, upload, token) == (.ok, bytes.count), "the finished upload says it is complete")
        }
    }

    // MARK: the protocol, request by request

    @Test func optionsSaysWhatTheServerSpeaks() async throws {
        let store = try TestStore()
        try await app(store.service).test(.router) { client in
            for uri in ["/v0/b/media/uploads", "/v0/b/media/uploads/anything"] {
                let response = try await client.execute(uri: uri, method: .options)
                #expect(response.status == .noContent || response.status == .ok, "\(uri)")
                #expect(response.headers[Self.tusVersion]?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.contains("1.0.0") == true)
                let extensions = Set((response.headers[Self.tusExtension] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                #expect(extensions.isSuperset(of: ["creation", "creation-with-upload", "termination", "expiration", "checksum"]), "\(extensions)")
                let algorithms = Set((response.headers[Self.tusChecksumAlgorithm] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                #expect(algorithms == ["sha1", "sha256", "md5"])
            }
        }
    }

    @Test func aRequestWithoutTusResumable1_0_0Gets412() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store.service).test(.router) { client in
            let creation: HTTPFields = [
                .authorization: "Bearer \(token)", Self.uploadLength: "10", Self.uploadMetadata: Self.metadata(["objectName": "alice/a.bin"]),
            ]
            for version in [nil, "0.2.2"] {
                var headers = creation
                if let version { headers[Self.tusResumable] = version }
                let response = try await client.execute(uri: "/v0/b/media/uploads", method: .post, headers: headers)
                #expect(response.status == .preconditionFailed, "Tus-Resumable: \(version ?? "none")")
                #expect(response.headers[Self.tusVersion] == "1.0.0")
                #expect(response.headers[.location] == nil, "nothing was created")
            }
            let upload = try await Self.started(client, token, name: "alice/a.bin", length: 10)
            for method in [HTTPRequest.Method.head, .patch, .delete] {
                let headers: HTTPFields = [.authorization: "Bearer \(token)", Self.uploadOffset: "0", .contentType: Self.chunkType]
                let response = try await client.execute(uri: upload, method: method, headers: headers, body: ByteBuffer(bytes: [1, 2, 3]))
                #expect(response.status == .preconditionFailed, "\(method)")
            }
            #expect(try await Self.offset(client, upload, token) == (.ok, 0), "the refused requests changed nothing")
        }
    }

    @Test func creationAnswersWhereAndUntilWhenAndHeadSaysWhatItHolds() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store.service).test(.router) { client in
            let created = try await Self.create(client, token, name: "alice/trip/day 1.bin", length: 1000)
            #expect(created.status == .created)
            #expect(created.headers[Self.tusResumable] == "1.0.0")
            let location = try #require(created.headers[.location])
            #expect(location.contains("/v0/b/media/uploads/"), "\(location)")
            let expires = try #require(created.headers[Self.uploadExpires])
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let expiry = try #require(formatter.date(from: expires), "an HTTP date: \(expires)")
            #expect(abs(expiry.timeIntervalSince(store.clock.now) - 24 * 3600) < 2, "a day from the service's clock")

            let head = try await client.execute(uri: try Self.path(of: location), method: .head, headers: Self.tus(token))
            #expect(head.status == .ok)
            #expect(head.headers[Self.uploadOffset] == "0")
            #expect(head.headers[Self.uploadLength] == "1000")
            #expect(head.headers[.cacheControl] == "no-store")
            #expect(head.headers[Self.tusResumable] == "1.0.0")
            let metadata = try TusMetadata(head.headers[Self.uploadMetadata])
            #expect(metadata["objectName"] == "alice/trip/day 1.bin")

            let unnamed = try await client.execute(
                uri: "/v0/b/media/uploads", method: .post, headers: Self.tus(token, [Self.uploadLength: "5", Self.uploadMetadata: Self.metadata(["other": "x"])]))
            #expect(unnamed.status == .badRequest)
            let deferred = try await client.execute(
                uri: "/v0/b/media/uploads", method: .post,
                headers: Self.tus(token, [HTTPField.Name("Upload-Defer-Length")!: "1", Self.uploadMetadata: Self.metadata(["objectName": "alice/d.bin"])]))
            #expect(deferred.status == .badRequest, "deferred lengths are not offered")
            let elsewhere = try await Self.create(client, token, name: "bob/mine.bin", length: 5)
            #expect(elsewhere.status == .forbidden, "the rules decide at creation")
            let anonymous = try await Self.create(client, nil, name: "alice/anon.bin", length: 5)
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test func aPatchAtTheWrongOffsetGets409WithTheOffsetHeld() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = randomBytes(1000)
        try await app(store.service).test(.router) { client in
            let upload = try await Self.started(client, token, name: "alice/offsets.bin", length: bytes.count)
            let first = try await Self.patch(client, upload, token, at: 0, Array(bytes[..<400]))
            #expect(first.status == .noContent)
            #expect(first.headers[Self.uploadOffset] == "400")
            #expect(first.headers[Self.tusResumable] == "1.0.0")
            for offset in [0, 100, 900] {
                let wrong = try await Self.patch(client, upload, token, at: offset, Array(bytes[400...]))
                #expect(wrong.status == .conflict, "PATCH at \(offset)")
                #expect(wrong.headers[Self.uploadOffset] == "400", "PATCH at \(offset) is told where to go on")
            }
            #expect(try await Self.offset(client, upload, token) == (.ok, 400))
            #expect(try await Self.patch(client, upload, token, at: 400, Array(bytes[400...])).status == .noContent)
            #expect(try await Self.object(client, "/v0/b/media/o/alice%2Foffsets.bin?alt=media", token) == (.ok, bytes))
        }
    }

    @Test func aChunkWithoutTheTusContentTypeGets415() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store.service).test(.router) { client in
            let upload = try await Self.started(client, token, name: "alice/typed.bin", length: 100)
            for type in ["application/octet-stream", "text/plain"] {
                let response = try await Self.patch(client, upload, token, at: 0, randomBytes(50), contentType: type)
                #expect(response.status == .unsupportedMediaType, "\(type)")
            }
            #expect(try await Self.offset(client, upload, token) == (.ok, 0))
        }
    }

    @Test(arguments: ["sha1", "sha256", "md5"])
    func aChunkWithAWrongChecksumGets460AndIsNotKept(algorithm: String) async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = randomBytes(300_000)
        let (head, tail) = (Array(bytes[..<100_000]), Array(bytes[100_000...]))
        try await app(store.service).test(.router) { client in
            let upload = try await Self.started(client, token, name: "alice/checked.bin", length: bytes.count)
            let good = try await Self.patch(client, upload, token, at: 0, head, checksum: "\(algorithm) \(base64Digest(algorithm, of: head))")
            #expect(good.status == .noContent)
            #expect(good.headers[Self.uploadOffset] == "100000")

            var damaged = tail
            damaged[1234] ^= 0x01
            let bad = try await Self.patch(client, upload, token, at: 100_000, damaged, checksum: "\(algorithm) \(base64Digest(algorithm, of: tail))")
            #expect(bad.status.code == 460, "\(bad.status)")
            #expect(bad.headers[Self.uploadOffset] == "100000")
            #expect(try await Self.offset(client, upload, token) == (.ok, 100_000), "nothing of the damaged chunk was kept")

            let unknown = try await Self.patch(client, upload, token, at: 100_000, tail, checksum: "crc32 AAAAAA==")
            #expect(unknown.status == .badRequest, "an algorithm not offered")
            #expect(try await Self.offset(client, upload, token) == (.ok, 100_000))

            let rest = try await Self.patch(client, upload, token, at: 100_000, tail, checksum: "\(algorithm) \(base64Digest(algorithm, of: tail))")
            #expect(rest.status == .noContent)
            #expect(rest.headers[Self.uploadOffset] == String(bytes.count))
            #expect(try await Self.object(client, "/v0/b/media/o/alice%2Fchecked.bin?alt=media", token) == (.ok, bytes))
        }
    }

    @Test func bytesPastUploadLengthGet413AndNothingOfThemIsKept() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = randomBytes(100)
        try await app(store.service).test(.router) { client in
            let upload = try await Self.started(client, token, name: "alice/short.bin", length: bytes.count)
            #expect(try await Self.patch(client, upload, token, at: 0, bytes + [0]).status == .contentTooLarge)
            #expect(try await Self.offset(client, upload, token) == (.ok, 0))
            #expect(try await Self.patch(client, upload, token, at: 0, Array(bytes[..<60])).status == .noContent)
            #expect(try await Self.patch(client, upload, token, at: 60, Array(bytes[60...]) + randomBytes(10)).status == .contentTooLarge)
            #expect(try await Self.offset(client, upload, token) == (.ok, 60))
            #expect(try await Self.patch(client, upload, token, at: 60, Array(bytes[60...])).status == .noContent)
            #expect(try await Self.object(client, "/v0/b/media/o/alice%2Fshort.bin?alt=media", token) == (.ok, bytes))

            let tooBig = try await Self.create(client, token, bucket: "users", name: "alice/huge.bin", length: 11 * 1024 * 1024)
            #expect(tooBig.status == .contentTooLarge, "a declared length over the path's limit is refused at creation")
        }
    }

    @Test(arguments: TestStore.SessionBytes.allCases)
    func terminationRemovesTheUploadAndItsBytes(_ sessionBytes: TestStore.SessionBytes) async throws {
        let store = try TestStore(sessionBytes: sessionBytes)
        let (_, token) = try await store.user("alice")
        let (_, bobToken) = try await store.user("bob")
        try await app(store.service).test(.router) { client in
            let upload = try await Self.started(client, token, name: "alice/gone.bin", length: 1000)
            #expect(try await Self.patch(client, upload, token, at: 0, randomBytes(600)).status == .noContent)
            #expect(!(try await store.heldUploadBytes()).isEmpty, "the chunk is stored")

            let bobs = try await client.execute(uri: upload, method: .delete, headers: Self.tus(bobToken))
            #expect(bobs.status == .forbidden, "only its owner ends an upload")
            let deleted = try await client.execute(uri: upload, method: .delete, headers: Self.tus(token))
            #expect(deleted.status == .noContent)
            #expect(deleted.headers[Self.tusResumable] == "1.0.0")
            #expect(try await Self.offset(client, upload, token).0 == .notFound)
            #expect(try await Self.patch(client, upload, token, at: 600, randomBytes(400)).status == .notFound)
            #expect(try await client.execute(uri: upload, method: .delete, headers: Self.tus(token)).status == .notFound)
            #expect((try await store.heldUploadBytes()).isEmpty, "the chunk's bytes are removed")
            #expect(try await Self.object(client, "/v0/b/media/o/alice%2Fgone.bin", token).0 == .notFound)
        }
    }

    @Test func creationWithUploadTakesTheFirstBytesOrAllOfThem() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = randomBytes(5000)
        try await app(store.service).test(.router) { client in
            let partial = try await Self.create(client, token, name: "alice/part.bin", length: bytes.count, body: Array(bytes[..<3000]))
            #expect(partial.status == .created)
            #expect(partial.headers[Self.uploadOffset] == "3000")
            let upload = try Self.path(of: partial.headers[.location])
            #expect(try await Self.offset(client, upload, token) == (.ok, 3000))
            #expect(try await Self.patch(client, upload, token, at: 3000, Array(bytes[3000...])).status == .noContent)
            #expect(try await Self.object(client, "/v0/b/media/o/alice%2Fpart.bin?alt=media", token) == (.ok, bytes))

            let whole = try await Self.create(client, token, name: "alice/whole.bin", length: bytes.count, body: bytes)
            #expect(whole.status == .created)
            #expect(whole.headers[Self.uploadOffset] == String(bytes.count))
            #expect(try await Self.object(client, "/v0/b/media/o/alice%2Fwhole.bin?alt=media", token) == (.ok, bytes), "stored by the creation")
            #expect(try await Self.offset(client, try Self.path(of: whole.headers[.location]), token) == (.ok, bytes.count))

            let empty = try await Self.create(client, token, name: "alice/empty.bin", length: 0)
            #expect(empty.status == .created)
            #expect(try await Self.object(client, "/v0/b/media/o/alice%2Fempty.bin?alt=media", token) == (.ok, []), "an empty upload is complete at once")
        }
    }

    /// A spot takes 4 objects; open tus uploads hold places, so a 5th is refused while 4 are
    /// open and terminating one frees its place. A finished upload keeps its place as an object.
    @Test func aFullSpotRefusesAFifthUploadUntilOneIsTerminated() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let photo = try fixture("geotagged/paris.jpg")
        try await app(store.service).test(.router) { client in
            var uploads: [String] = []
            for index in 1...4 {
                uploads.append(try await Self.started(client, token, bucket: "spots", name: "eiffel/\(index).jpg", length: photo.count, contentType: "image/jpeg"))
            }
            let fifth = try await Self.create(client, token, bucket: "spots", name: "eiffel/5.jpg", length: photo.count, contentType: "image/jpeg")
            #expect(fifth.status == .conflict, "\(String(buffer: fifth.body))")
            #expect(fifth.headers[.location] == nil)
            let oneShot = try await client.execute(
                uri: "/v0/b/spots/o/eiffel%2F5.jpg", method: .put, headers: [.authorization: "Bearer \(token)"], body: ByteBuffer(bytes: photo))
            #expect(oneShot.status == .conflict, "open uploads count for one-shot uploads too")

            #expect(try await client.execute(uri: uploads[3], method: .delete, headers: Self.tus(token)).status == .noContent)
            _ = try await Self.started(client, token, bucket: "spots", name: "eiffel/5.jpg", length: photo.count, contentType: "image/jpeg")

            let finished = try await Self.patch(client, uploads[0], token, at: 0, photo)
            #expect(finished.status == .noContent)
            #expect(finished.headers[Self.uploadOffset] == String(photo.count))
            let metadata = try Self.json(try await client.execute(uri: "/v0/b/spots/o/eiffel%2F1.jpg", method: .get, headers: [.authorization: "Bearer \(token)"]))
            #expect(metadata["contentType"] as? String == "image/jpeg")
            #expect(metadata["sha256"] as? String == hexSHA256(photo))
            #expect((metadata["photo"] as? [String: Any])?["location"] != nil, "a tus upload is analysed like any other")
            let sixth = try await Self.create(client, token, bucket: "spots", name: "eiffel/6.jpg", length: photo.count, contentType: "image/jpeg")
            #expect(sixth.status == .conflict, "the finished upload holds its place as an object")
        }
    }

    @Test func filenameAndFiletypeNameTheObjectAndItsType() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let photo = try fixture("photos/coffee.jpg")
        let text = Array("notes from the trip\n".utf8)
        try await app(store.service).test(.router) { client in
            let headers = Self.tus(token, [
                Self.uploadLength: String(photo.count), .contentType: Self.chunkType,
                Self.uploadMetadata: Self.metadata(["filename": "cafe/coffee.jpg", "filetype": "image/jpeg"]),
            ])
            let created = try await client.execute(uri: "/v0/b/spots/uploads", method: .post, headers: headers, body: ByteBuffer(bytes: photo))
            #expect(created.status == .created, "\(String(buffer: created.body))")
            #expect(created.headers[Self.uploadOffset] == String(photo.count))
            let stored = try Self.json(try await client.execute(uri: "/v0/b/spots/o/cafe%2Fcoffee.jpg", method: .get, headers: [.authorization: "Bearer \(token)"]))
            #expect(stored["name"] as? String == "cafe/coffee.jpg")
            #expect(stored["contentType"] as? String == "image/jpeg")

            let upload = try await client.execute(
                uri: "/v0/b/media/uploads", method: .post,
                headers: Self.tus(token, [
                    Self.uploadLength: String(text.count),
                    Self.uploadMetadata: Self.metadata(["filename": "alice/notes.txt", "filetype": "text/plain", "lastModified": "1700000000"]),
                ]))
            #expect(upload.status == .created)
            #expect(try await Self.patch(client, try Self.path(of: upload.headers[.location]), token, at: 0, text).status == .noContent)
            let notes = try Self.json(try await client.execute(uri: "/v0/b/media/o/alice%2Fnotes.txt", method: .get, headers: [.authorization: "Bearer \(token)"]))
            #expect(notes["contentType"] as? String == "text/plain", "filetype is the object's type")

            let both = try await client.execute(
                uri: "/v0/b/media/uploads", method: .post,
                headers: Self.tus(token, [
                    Self.uploadLength: "3",
                    Self.uploadMetadata: Self.metadata(["objectName": "alice/chosen.bin", "filename": "alice/ignored.bin"]),
                ]))
            #expect(both.status == .created)
            let head = try await client.execute(uri: try Self.path(of: both.headers[.location]), method: .head, headers: Self.tus(token))
            #expect(try TusMetadata(head.headers[Self.uploadMetadata])["objectName"] == "alice/chosen.bin", "objectName wins over filename")
        }
    }

    @Test func anotherUserCannotGoOnWithAnUpload() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let (_, bobToken) = try await store.user("bob")
        try await app(store.service).test(.router) { client in
            let upload = try await Self.started(client, token, name: "alice/private.bin", length: 10)
            #expect(try await Self.offset(client, upload, bobToken).0 == .forbidden)
            #expect(try await Self.patch(client, upload, bobToken, at: 0, randomBytes(10)).status == .forbidden)
            #expect(try await Self.offset(client, upload, token) == (.ok, 0))
            #expect(try await Self.offset(client, "/v0/b/media/uploads/no-such-upload", token).0 == .notFound)
        }
    }

    /// Past `Upload-Expires` an upload is gone at once, before any sweep.
    @Test func anExpiredUploadIsGoneBeforeTheSweep() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store.service).test(.router) { client in
            let upload = try await Self.started(client, token, name: "alice/slow.bin", length: 100)
            store.clock.advance(by: 24 * 3600 + 1)
            let head = try await client.execute(uri: upload, method: .head, headers: Self.tus(token))
            #expect(head.status == .notFound)
            #expect(head.headers[Self.tusResumable] == "1.0.0", "errors carry Tus-Resumable too")
            #expect(try await Self.patch(client, upload, token, at: 0, randomBytes(10)).status == .notFound)
        }
    }

    /// An upload is reached only under the bucket it goes into, and HEAD gives back the
    /// metadata as the client sent it.
    @Test func anUploadLivesInItsBucketAndKeepsItsMetadata() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store.service).test(.router) { client in
            let sent = Self.metadata(["objectName": "alice/a.bin", "filetype": "text/plain", "relativePath": "x/a.bin"])
            let created = try await client.execute(
                uri: "/v0/b/media/uploads", method: .post, headers: Self.tus(token, [Self.uploadLength: "10", Self.uploadMetadata: sent]))
            let upload = try Self.path(of: created.headers[.location])
            let head = try await client.execute(uri: upload, method: .head, headers: Self.tus(token))
            #expect(head.headers[Self.uploadMetadata] == sent)
            let elsewhere = upload.replacingOccurrences(of: "/v0/b/media/", with: "/v0/b/spots/")
            #expect(try await Self.offset(client, elsewhere, token).0 == .notFound)
            #expect(try await Self.patch(client, elsewhere, token, at: 0, randomBytes(10)).status == .notFound)
            #expect(try await client.execute(uri: elsewhere, method: .delete, headers: Self.tus(token)).status == .notFound)
            #expect(try await Self.offset(client, upload, token) == (.ok, 0), "the upload is untouched")
        }
    }

    /// An upload not continued for a day expires: the sweep removes it with its bytes.
    @Test(arguments: TestStore.SessionBytes.allCases)
    func anExpiredUploadIsGone(_ sessionBytes: TestStore.SessionBytes) async throws {
        let store = try TestStore(sessionBytes: sessionBytes)
        let (_, token) = try await store.user("alice")
        try await app(store.service).test(.router) { client in
            let upload = try await Self.started(client, token, name: "alice/late.bin", length: 100)
            #expect(try await Self.patch(client, upload, token, at: 0, randomBytes(40)).status == .noContent)
            store.clock.advance(by: 24 * 3600 + 1)
            #expect(try await store.service.sweepExpiredUploads() == 1)
            #expect(try await Self.offset(client, upload, token).0 == .notFound)
            #expect(try await Self.patch(client, upload, token, at: 40, randomBytes(60)).status == .notFound)
            #expect((try await store.heldUploadBytes()).isEmpty)
        }
    }

    /// A chunk whose connection drops half way: the bytes that arrived are kept (without
    /// a checksum), so the client sends only what is missing; with a checksum nothing is kept.
    @Test func aChunkCutOffHalfWayKeepsWhatArrivedUnlessItHasAChecksum() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = randomBytes(400_000)
        let gate = UploadGate()
        try await app(store.service, gate: gate).test(.live) { client in
            let port = try #require(client.port)
            let upload = try await Self.started(client, token, name: "alice/cut.bin", length: bytes.count)
            let head = "PATCH \(upload) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(token)\r\nTus-Resumable: 1.0.0\r\n"
                + "Upload-Offset: 0\r\nContent-Type: \(Self.chunkType)\r\nContent-Length: 200000\r\n"

            let checksum = "Upload-Checksum: sha256 \(base64Digest("sha256", of: Array(bytes[..<200_000])))\r\n"
            try await Self.cut(head + checksum + "\r\n", Array(bytes[..<100_000]), port: port, gate: gate)
            #expect(try await Self.offset(client, upload, token) == (.ok, 0), "a chunk cut short cannot be checked: nothing of it is kept")

            try await Self.cut(head + "\r\n", Array(bytes[..<150_000]), port: port, gate: gate)
            #expect(try await Self.offset(client, upload, token) == (.ok, 150_000), "the bytes that arrived are kept")
            #expect(try await Self.patch(client, upload, token, at: 150_000, Array(bytes[150_000...])).status == .noContent)
            let (status, stored) = try await Self.object(client, "/v0/b/media/o/alice%2Fcut.bin?alt=media", token)
            #expect(status == .ok && hexSHA256(stored) == hexSHA256(bytes))
            #expect(try store.temporaryFiles().isEmpty, "no staged leftovers")
        }
    }

    /// Sends `head` and `part` of a body on a new connection, and closes it once the server is
    /// receiving the upload; returns when the server has dealt with the cut.
    static func cut(_ head: String, _ part: [UInt8], port: Int, gate: UploadGate) async throws {
        let connection = try RawHTTPConnection(port: port)
        try await connection.send(head, part)
        #expect(try await waitUntil { gate.inFlight == 1 }, "the upload is being received")
        connection.close()
        #expect(try await waitUntil { gate.inFlight == 0 }, "the server noticed the connection was cut")
    }
}

/// A parsed `Upload-Metadata` value.
struct TusMetadata {
    let pairs: [String: String]

    init(_ header: String?) throws {
        var pairs: [String: String] = [:]
        for pair in (header ?? "").split(separator: ",") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard let key = parts.first else { continue }
            let value = parts.count == 2 ? try #require(Data(base64Encoded: String(parts[1]))) : Data()
            pairs[String(key)] = String(decoding: value, as: UTF8.self)
        }
        self.pairs = pairs
    }

    subscript(_ key: String) -> String? { pairs[key] }
}

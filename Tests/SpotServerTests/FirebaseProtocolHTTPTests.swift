import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SpotCore
import SpotServer
import Testing
import TestSupport

/// Firebase Storage's wire protocol as its SDKs send it: multipart uploads, resumable
/// uploads in growing chunks (queried, cut, cancelled), metadata updates, and the
/// download token `getDownloadURL()` reads.
extension HTTPTests {
    /// A multipart/related body as firebase-js-sdk's `multipartUpload` builds it.
    func multipart(_ metadata: [String: Any], _ bytes: [UInt8], contentType: String, boundary: String = "4521873094325109") throws -> ByteBuffer {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: metadata), as: UTF8.self)
        var body = ByteBuffer(string: "--\(boundary)\r\nContent-Type: application/json; charset=utf-8\r\n\r\n\(json)\r\n--\(boundary)\r\nContent-Type: \(contentType)\r\n\r\n")
        body.writeBytes(bytes)
        body.writeString("\r\n--\(boundary)--")
        return body
    }

    func firebase(_ token: String, _ fields: [(String, String)] = []) -> HTTPFields {
        var headers: HTTPFields = [.authorization: "Firebase \(token)"]
        for (name, value) in fields { headers[HTTPField.Name(name)!] = value }
        return headers
    }

    @Test func aMultipartUploadStoresTheBytesWithFirebaseMetadata() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("geotagged/san-francisco.jpg")
        try await app(store).test(.router) { client in
            let body = try multipart(
                ["name": "pier/a.jpg", "contentType": "image/jpeg", "cacheControl": "public, max-age=300",
                 "contentDisposition": "inline; filename=\"a.jpg\"", "metadata": ["trail": "north", "by": "alice"]],
                bytes, contentType: "image/jpeg")
            let metadata = try await client.execute(
                uri: "/v0/b/spots/o?name=pier%2Fa.jpg", method: .post,
                headers: firebase(token, [("X-Goog-Upload-Protocol", "multipart"), ("Content-Type", "multipart/related; boundary=4521873094325109")]),
                body: body
            ) { response in
                #expect(response.status == .ok)
                return try json(response)
            }
            #expect(metadata["size"] as? Int == bytes.count)
            #expect(metadata["sha256"] as? String == SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
            #expect(metadata["md5Hash"] as? String == Data(Insecure.MD5.hash(data: bytes)).base64EncodedString())
            #expect(metadata["metageneration"] as? String == "1")
            #expect(Int64(metadata["generation"] as? String ?? "") ?? 0 > 0)
            #expect(metadata["metadata"] as? [String: String] == ["trail": "north", "by": "alice"])
            #expect(metadata["cacheControl"] as? String == "public, max-age=300")
            #expect((metadata["photo"] as? [String: Any]) != nil, "the bytes went through the photo pipeline")
            let downloadToken = try #require(metadata["downloadTokens"] as? String)

            // getDownloadURL(): read the metadata, then ?alt=media&token= with no Authorization.
            let read = try await client.execute(uri: "/v0/b/spots/o/pier%2Fa.jpg", method: .get, headers: firebase(token)) { try json($0) }
            #expect(read["downloadTokens"] as? String == downloadToken)
            try await client.execute(uri: "/v0/b/spots/o/pier%2Fa.jpg?alt=media&token=\(downloadToken)", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == bytes)
                #expect(response.headers[.cacheControl] == "public, max-age=300")
                #expect(response.headers[.contentDisposition] == "inline; filename=\"a.jpg\"")
            }
            // The same bytes through a plain PUT make the same blob.
            let again = try await client.execute(uri: "/v0/b/spots/o/pier%2Fb.jpg", method: .put, headers: auth(token), body: ByteBuffer(bytes: bytes)) {
                try json($0)
            }
            #expect(again["sha256"] as? String == metadata["sha256"] as? String)
        }
    }

    @Test func badMultipartBodiesStoreNothing() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("photos/rocket.jpg")
        let headers = firebase(token, [("X-Goog-Upload-Protocol", "multipart"), ("Content-Type", "multipart/related; boundary=b0undary")])
        try await app(store).test(.router) { client in
            var cut = try multipart(["name": "u/a.jpg"], bytes, contentType: "image/jpeg", boundary: "b0undary")
            cut.moveWriterIndex(to: cut.writerIndex - 12)
            let wrongMD5 = try multipart(["md5Hash": Data(repeating: 7, count: 16).base64EncodedString()], bytes, contentType: "image/jpeg", boundary: "b0undary")
            let otherName = try multipart(["name": "elsewhere/a.jpg"], bytes, contentType: "image/jpeg", boundary: "b0undary")
            let notJSON = ByteBuffer(string: "--b0undary\r\n\r\nnot json\r\n--b0undary\r\n\r\nbytes\r\n--b0undary--")
            for (body, expected) in [(cut, "closing boundary"), (wrongMD5, "md5Hash"), (otherName, "elsewhere/a.jpg"), (notJSON, "JSON object")] {
                let response = try await client.execute(uri: "/v0/b/spots/o?name=u%2Fa.jpg", method: .post, headers: headers, body: body)
                #expect(response.status == .badRequest)
                let message = try errorMessage(response)
                #expect(message.contains(expected), "\(message)")
            }
            var noBoundary = headers
            noBoundary[.contentType] = "multipart/related"
            try await client.execute(uri: "/v0/b/spots/o?name=u%2Fa.jpg", method: .post, headers: noBoundary, body: ByteBuffer(bytes: bytes)) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: "/v0/b/spots/o/u%2Fa.jpg", method: .get, headers: auth(token)) { response in
                #expect(response.status == .notFound, "nothing was stored")
            }
        }
        #expect(try store.temporaryFiles().isEmpty)
    }

    /// Starts a resumable upload; returns the upload URL's path and query.
    func startResumable(
        _ client: some TestClientProtocol, token: String, name: String, size: Int, iOSSpelling: Bool = false, metadata: [String: Any] = [:]
    ) async throws -> String {
        let prefix = iOSSpelling ? "X-Goog-Upload-" : "X-Goog-Upload-Header-"
        let headers = firebase(token, [
            ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
            ("\(prefix)Content-Length", String(size)), ("\(prefix)Content-Type", "image/jpeg"),
            ("Content-Type", "application/json; charset=utf-8"),
        ])
        let body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: metadata.merging(["name": name]) { $1 }))
        let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
        return try await client.execute(uri: "/v0/b/spots/o?name=\(encoded)", method: .post, headers: headers, body: body) { response in
            #expect(response.status == .ok)
            #expect(response.headers[HTTPField.Name("X-Goog-Upload-Status")!] == "active")
            #expect(response.headers[HTTPField.Name("X-Goog-Upload-Chunk-Granularity")!] == "262144")
            let url = try #require(response.headers[HTTPField.Name("X-Goog-Upload-URL")!].flatMap(URLComponents.init(string:)))
            return "\(url.path)?\(url.percentEncodedQuery ?? "")"
        }
    }

    /// Sends one chunk command; returns the response.
    func chunk(
        _ client: some TestClientProtocol, _ url: String, token: String, command: String, offset: Int, bytes: ArraySlice<UInt8>
    ) async throws -> TestResponse {
        try await client.execute(
            uri: url, method: .post, headers: firebase(token, [("X-Goog-Upload-Command", command), ("X-Goog-Upload-Offset", String(offset))]),
            body: ByteBuffer(bytes: bytes))
    }

    @Test func aResumableUploadInGrowingChunksSurvivesAWrongOffsetAndAQuery() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("photos/rocket.jpg") + Array(repeating: 0, count: 0)
        try await app(store).test(.router) { client in
            let url = try await startResumable(client, token: token, name: "moon/rocket.jpg", size: bytes.count, metadata: ["metadata": ["k": "v"]])
            // The SDK's chunks grow: 256 KiB, then doubling.
            var offset = 0
            var size = 256 * 1024
            var final: [String: Any]?
            while final == nil {
                let end = min(offset + size, bytes.count)
                let last = end == bytes.count
                let response = try await chunk(client, url, token: token, command: last ? "upload, finalize" : "upload", offset: offset, bytes: bytes[offset..<end])
                #expect(response.status == .ok)
                if last {
                    #expect(response.headers[HTTPField.Name("X-Goog-Upload-Status")!] == "final")
                    final = try json(response)
                    break
                }
                #expect(response.headers[HTTPField.Name("X-Goog-Upload-Size-Received")!] == String(end))
                // A retry of the chunk just sent is at the wrong offset: 409 with the right one.
                let retry = try await chunk(client, url, token: token, command: "upload", offset: offset, bytes: bytes[offset..<end])
                #expect(retry.status == .conflict)
                #expect(retry.headers[HTTPField.Name("X-Goog-Upload-Size-Received")!] == String(end))
                let query = try await client.execute(uri: url, method: .post, headers: firebase(token, [("X-Goog-Upload-Command", "query")]))
                #expect(query.headers[HTTPField.Name("X-Goog-Upload-Size-Received")!] == String(end))
                offset = end
                size *= 2
            }
            let object = try #require(final)
            #expect(object["sha256"] as? String == SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
            #expect(object["metadata"] as? [String: String] == ["k": "v"])
            #expect(object["downloadTokens"] is String)
            // A client whose last answer was lost: a query says final, finalizing again
            // answers the same object.
            let query = try await client.execute(uri: url, method: .post, headers: firebase(token, [("X-Goog-Upload-Command", "query")]))
            #expect(query.status == .ok)
            #expect(query.headers[HTTPField.Name("X-Goog-Upload-Status")!] == "final")
            #expect(query.headers[HTTPField.Name("X-Goog-Upload-Size-Received")!] == String(bytes.count))
            let again = try await chunk(client, url, token: token, command: "finalize", offset: bytes.count, bytes: [])
            #expect(again.status == .ok)
            #expect(try json(again)["generation"] as? String == object["generation"] as? String)
            let lastAgain = try await chunk(client, url, token: token, command: "upload, finalize", offset: 0, bytes: bytes[...])
            #expect(lastAgain.status == .ok, "the last chunk sent again also answers the object")
            // Once the object is replaced, the old session no longer answers for it.
            #expect(try await client.execute(uri: "/v0/b/spots/o/moon%2Frocket.jpg", method: .put, headers: auth(token), body: ByteBuffer(bytes: bytes)).status == .ok)
            #expect(try await chunk(client, url, token: token, command: "finalize", offset: bytes.count, bytes: []).status == .notFound)
        }
    }

    /// Several finalizes of one session at once (a client retrying): one stores the object,
    /// every one answers it.
    @Test func concurrentFinalizesAllAnswerTheOneObject() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("photos/chelsea.jpg")
        try await app(store).test(.router) { client in
            let url = try await startResumable(client, token: token, name: "many/chelsea.jpg", size: bytes.count)
            #expect(try await chunk(client, url, token: token, command: "upload", offset: 0, bytes: bytes[...]).status == .ok)
            let generations = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let response = try await chunk(client, url, token: token, command: "finalize", offset: bytes.count, bytes: [])
                        return response.status == .ok ? try json(response)["generation"] as? String : nil
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(generations.count == 4 && generations.allSatisfy { $0 != nil })
            #expect(Set(generations).count == 1, "one object, one generation")
        }
    }

    @Test func aResumableUploadStartedOnOneInstanceFinishesOnAnother() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("photos/coffee.jpg")
        let half = bytes.count / 2
        let url = try await app(store).test(.router) { client in
            let url = try await startResumable(client, token: token, name: "cafe/coffee.jpg", size: bytes.count, iOSSpelling: true)
            #expect(try await chunk(client, url, token: token, command: "upload", offset: 0, bytes: bytes[..<half]).status == .ok)
            return url
        }
        let other = SpotServer.makeApplication(service: try store.otherInstance("b"), configuration: .init(host: "127.0.0.1", port: 0), logger: .init(label: "b"))
        try await other.test(.router) { client in
            let response = try await chunk(client, url, token: token, command: "upload, finalize", offset: half, bytes: bytes[half...])
            #expect(response.status == .ok)
            #expect(try json(response)["size"] as? Int == bytes.count)
            try await client.execute(uri: "/v0/b/spots/o/cafe%2Fcoffee.jpg?alt=media", method: .get, headers: auth(token)) { response in
                #expect(Array(buffer: response.body) == bytes)
            }
        }
    }

    @Test(arguments: TestStore.SessionBytes.allCases)
    func openSessionsHoldTheirPlacesInTheSpotUntilCancelledOrExpired(_ sessionBytes: TestStore.SessionBytes) async throws {
        let store = try TestStore(sessionBytes: sessionBytes)
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("photos/rocket.jpg")
        try await app(store).test(.router) { client in
            var urls: [String] = []
            for index in 0..<4 {
                urls.append(try await startResumable(client, token: token, name: "full/\(index).jpg", size: bytes.count))
            }
            let start = firebase(token, [("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"), ("X-Goog-Upload-Header-Content-Length", "10")])
            try await client.execute(uri: "/v0/b/spots/o?name=full%2F4.jpg", method: .post, headers: start) { response in
                #expect(response.status == .conflict, "four sessions fill a spot of four")
            }
            try await client.execute(uri: "/v0/b/spots/o/full%2F5.jpg", method: .put, headers: auth(token), body: ByteBuffer(bytes: bytes)) { response in
                #expect(response.status == .conflict, "a one-shot upload counts the sessions too")
            }
            let cancel = try await client.execute(uri: urls[0], method: .post, headers: firebase(token, [("X-Goog-Upload-Command", "cancel")]))
            #expect(cancel.status == .ok)
            #expect(cancel.headers[HTTPField.Name("X-Goog-Upload-Status")!] == "cancelled")
            try await client.execute(uri: "/v0/b/spots/o/full%2F5.jpg", method: .put, headers: auth(token), body: ByteBuffer(bytes: bytes)) { response in
                #expect(response.status == .ok, "cancelling freed a place")
            }
            // A chunk of a session that then expires: the sweep removes the session and its bytes.
            let held = Set((try await store.heldUploadBytes()))
            #expect(try await chunk(client, urls[1], token: token, command: "upload", offset: 0, bytes: bytes[..<1000]).status == .ok)
            #expect((try await store.heldUploadBytes()).count == held.count + 1, "the chunk's bytes are kept")
            store.clock.advance(by: 25 * 3600)
            #expect(try await store.service.sweepExpiredUploads() == 3)
            #expect(Set((try await store.heldUploadBytes())) == held, "an expired session's bytes are removed")
            let query = try await client.execute(uri: urls[1], method: .post, headers: firebase(token, [("X-Goog-Upload-Command", "query")]))
            #expect(query.status == .notFound)
        }
    }

    /// The session's URL lets a client go on without a token, but finishing needs the
    /// sign-in of the start to stand: revoked since, the upload is refused.
    @Test func anUploadStartedBeforeARevocationCannotBeFinished() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("photos/rocket.jpg")
        try await app(store).test(.router) { client in
            let url = try await startResumable(client, token: token, name: "gone/rocket.jpg", size: bytes.count)
            let headers: HTTPFields = [
                HTTPField.Name("X-Goog-Upload-Command")!: "upload", HTTPField.Name("X-Goog-Upload-Offset")!: "0",
            ]
            #expect(try await client.execute(uri: url, method: .post, headers: headers, body: ByteBuffer(bytes: bytes[..<1000])).status == .ok)
            #expect(try await store.service.catalog.revokeTokens(of: "alice"))
            let finalize: HTTPFields = [
                HTTPField.Name("X-Goog-Upload-Command")!: "upload, finalize", HTTPField.Name("X-Goog-Upload-Offset")!: "1000",
            ]
            let response = try await client.execute(uri: url, method: .post, headers: finalize, body: ByteBuffer(bytes: bytes[1000...]))
            #expect(response.status == .forbidden)
            #expect(try errorMessage(response).contains("revoked"))
        }
    }

    /// A user deleted and created again under the same uid is another person: the uploads
    /// the first one started end with it.
    @Test func anUploadOfADeletedUserCannotBeFinishedByItsSuccessor() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("photos/rocket.jpg")
        try await app(store).test(.router) { client in
            let url = try await startResumable(client, token: token, name: "gone/rocket.jpg", size: bytes.count)
            try await store.service.deleteUser("alice")
            _ = try await store.user("alice")
            let finalize: HTTPFields = [
                HTTPField.Name("X-Goog-Upload-Command")!: "upload, finalize", HTTPField.Name("X-Goog-Upload-Offset")!: "0",
            ]
            let response = try await client.execute(uri: url, method: .post, headers: finalize, body: ByteBuffer(bytes: bytes))
            #expect(response.status == .notFound)
            #expect(try await store.service.catalog.object(at: try ObjectPath(bucket: "spots", name: "gone/rocket.jpg")) == nil)
        }
    }

    @Test func metadataUpdatesBumpTheMetagenerationAndKeepTheToken() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let (_, bobToken) = try await store.user("bob")
        try await app(store).test(.router) { client in
            let put = try await client.execute(
                uri: "/v0/b/spots/o/lake%2Fa.jpg", method: .put, headers: auth(token), body: ByteBuffer(bytes: try fixture("photos/rocket.jpg"))
            ) { try json($0) }
            let patch: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]
            let first = try await client.execute(
                uri: "/v0/b/spots/o/lake%2Fa.jpg", method: .patch, headers: patch,
                body: ByteBuffer(string: #"{"metadata": {"a": "1", "b": "2"}, "cacheControl": "no-cache", "size": 5}"#)
            ) { response in
                #expect(response.status == .ok)
                return try json(response)
            }
            #expect(first["metageneration"] as? String == "2")
            #expect(first["generation"] as? String == put["generation"] as? String)
            #expect(first["metadata"] as? [String: String] == ["a": "1", "b": "2"])
            #expect(first["downloadTokens"] as? String == put["downloadTokens"] as? String)
            // POST with X-HTTP-Method-Override: PATCH; null removes a key and a field.
            var override = patch
            override[HTTPField.Name("X-HTTP-Method-Override")!] = "PATCH"
            let second = try await client.execute(
                uri: "/v0/b/spots/o/lake%2Fa.jpg", method: .post, headers: override, body: ByteBuffer(string: #"{"metadata": {"a": null}, "cacheControl": null}"#)
            ) { try json($0) }
            #expect(second["metageneration"] as? String == "3")
            #expect(second["metadata"] as? [String: String] == ["b": "2"])
            #expect(second["cacheControl"] == nil)
            // Any other override is refused, and never becomes an upload of the empty body.
            for (uri, method) in [("/v0/b/spots/o?name=lake%2Fa.jpg", "DELETE"), ("/v0/b/spots/o/lake%2Fa.jpg", "DELETE"), ("/v0/b/spots/o/lake%2Fa.jpg", "PUT")] {
                override[HTTPField.Name("X-HTTP-Method-Override")!] = method
                let response = try await client.execute(uri: uri, method: .post, headers: override)
                #expect(response.status == .badRequest, "\(method) over POST \(uri)")
                #expect(try errorMessage(response).contains("X-HTTP-Method-Override: \(method)"))
            }
            let kept = try await client.execute(uri: "/v0/b/spots/o/lake%2Fa.jpg?alt=media", method: .get, headers: auth(token))
            #expect(Array(buffer: kept.body) == (try fixture("photos/rocket.jpg")))
            let huge = String(repeating: "x", count: 9000)
            try await client.execute(uri: "/v0/b/spots/o/lake%2Fa.jpg", method: .patch, headers: patch, body: ByteBuffer(string: #"{"metadata": {"k": "\#(huge)"}}"#)) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: "/v0/b/spots/o/lake%2Fa.jpg", method: .patch, headers: patch, body: ByteBuffer(string: #"{"contentType": "text/plain"}"#)) { response in
                #expect(response.status == .badRequest, "an image's type is what its bytes are")
            }
            try await client.execute(uri: "/v0/b/spots/o/lake%2Fa.jpg", method: .patch, headers: patch, body: ByteBuffer(string: #"{"contentDisposition": "a\r\nSet-Cookie: x"}"#)) { response in
                #expect(response.status == .badRequest, "no header injection")
            }
            var bob = patch
            bob[.authorization] = "Bearer \(bobToken)"
            try await client.execute(uri: "/v0/b/spots/o/lake%2Fa.jpg", method: .patch, headers: bob, body: ByteBuffer(string: #"{"metadata": {"a": "x"}}"#)) { response in
                #expect(response.status == .forbidden, "only who may update the object may change its metadata")
            }
            // Revoking the token made on upload hides it from the metadata at once.
            let tokenValue = try #require(put["downloadTokens"] as? String)
            let id = String(SHA256.hash(data: Array(tokenValue.utf8)).map { String(format: "%02x", $0) }.joined().prefix(16))
            try await client.execute(uri: "/v0/b/spots/o/lake%2Fa.jpg?alt=downloadTokens&id=\(id)", method: .delete, headers: auth(token)) { response in
                #expect(response.status == .noContent)
            }
            let seenByBob = try await client.execute(uri: "/v0/b/spots/o/lake%2Fa.jpg", method: .get, headers: auth(bobToken)) { try json($0) }
            #expect(seenByBob["downloadTokens"] == nil)
            try await client.execute(uri: "/v0/b/spots/o/lake%2Fa.jpg?alt=media&token=\(tokenValue)", method: .get) { response in
                #expect(response.status == .forbidden)
            }
        }
    }

    /// What REST clients such as pyrebase send: `DELETE …/o?name=`, and the user's own
    /// token in `?token=` (it reads as that user, under the rules).
    @Test func restClientsDeleteByNameAndReadWithTheirOwnTokenInTheURL() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let (_, bobToken) = try await store.user("bob")
        let bytes = try fixture("photos/rocket.jpg")
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/users/o?name=alice%2Fr.jpg", method: .post, headers: firebase(token), body: ByteBuffer(bytes: bytes)) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/v0/b/users/o/alice%2Fr.jpg?alt=media&token=\(token)", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == bytes)
            }
            try await client.execute(uri: "/v0/b/users/o/alice%2Fr.jpg?alt=media&token=\(bobToken)", method: .get) { response in
                #expect(response.status == .forbidden, "bob's token reads only what bob may read")
            }
            try await client.execute(uri: "/v0/b/users/o/alice%2Fr.jpg?alt=media&token=nonsense", method: .get) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v0/b/users/o?name=alice%2Fr.jpg", method: .delete, headers: firebase(bobToken)) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v0/b/users/o?name=alice%2Fr.jpg", method: .delete, headers: firebase(token)) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/v0/b/users/o/alice%2Fr.jpg", method: .get, headers: auth(token)) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    /// Sixteen resumable starts at once into an empty spot of four: exactly four sessions.
    @Test func sixteenSessionsStartedAtOnceIntoASpotOfFourGetFourPlaces() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        let headers = firebase(token, [
                            ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
                            ("X-Goog-Upload-Header-Content-Length", "1000"),
                        ])
                        return try await client.execute(uri: "/v0/b/spots/o?name=race%2F\(index).jpg", method: .post, headers: headers).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count == 4)
            #expect(statuses.filter { $0 == .conflict }.count == 12)
        }
    }

    /// A metadata update cannot give an object a type the rules' `limit types` refuse (no
    /// HTML served from the API's origin), nor a type with control characters.
    @Test func aMetadataUpdateKeepsToTheTypesTheRulesAllow() async throws {
        let rules = """
            match /b/media/o/{uid}/{path=**} {
              allow read, write: if request.auth.uid == uid;
              limit types: ["text/plain", "application/octet-stream"];
            }
            """
        let store = try TestStore(rules: rules)
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            var headers = auth(token)
            headers[.contentType] = "text/plain"
            #expect(try await client.execute(uri: "/v0/b/media/o/alice%2Fa.txt", method: .put, headers: headers, body: ByteBuffer(string: "<script>x</script>")).status == .ok)
            let patch: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]
            try await client.execute(uri: "/v0/b/media/o/alice%2Fa.txt", method: .patch, headers: patch, body: ByteBuffer(string: #"{"contentType": "text/html"}"#)) { response in
                #expect(response.status == .unsupportedMediaType)
            }
            try await client.execute(uri: "/v0/b/media/o/alice%2Fa.txt", method: .patch, headers: patch, body: ByteBuffer(string: #"{"contentType": "application/octet-stream"}"#)) { response in
                #expect(response.status == .ok, "an allowed type may be set")
            }
            try await client.execute(uri: "/v0/b/media/o/alice%2Fa.txt?alt=media", method: .get, headers: auth(token)) { response in
                #expect(response.headers[.contentType] == "application/octet-stream")
            }
        }
    }

    @Test func theRulesCanTurnDownloadTokensOnUploadOff() async throws {
        let rules = """
            match /b/media/o/{uid}/{path=**} {
              allow read, write: if request.auth.uid == uid;
              limit downloadTokens: false;
            }
            """
        let store = try TestStore(rules: rules)
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            let metadata = try await client.execute(uri: "/v0/b/media/o/alice%2Fa.bin", method: .put, headers: auth(token), body: ByteBuffer(string: "hello")) {
                try json($0)
            }
            #expect(metadata["downloadTokens"] == nil)
            #expect(metadata["md5Hash"] as? String == Data(Insecure.MD5.hash(data: Array("hello".utf8))).base64EncodedString())
        }
    }
}

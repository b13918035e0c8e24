import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import SpotCore
import SpotServer
import Testing
import TestSupport

/// The HTTP API end to end over a real store (SQLite file, blob files, real fixtures).
@Suite struct HTTPTests {
    func app(_ store: TestStore, configuration: ServerConfiguration = .init(host: "127.0.0.1", port: 0)) -> some ApplicationProtocol {
        SpotServer.makeApplication(service: store.service, configuration: configuration, logger: Logger(label: "test"))
    }

    func auth(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)"] }

    func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
    }

    func errorMessage(_ response: TestResponse) throws -> String {
        let error = try #require(try json(response)["error"] as? [String: Any])
        #expect(error["code"] as? Int == Int(response.status.code))
        return try #require(error["message"] as? String)
    }

    @Test func uploadsAndReturnsAPhotoWithMetadata() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("geotagged/san-francisco.jpg")
        try await app(store).test(.router) { client in
            let metadata = try await client.execute(
                uri: "/v0/b/spots/o/fort-point%2Fgate.jpg", method: .put, headers: auth(token), body: ByteBuffer(bytes: bytes)
            ) { response in
                #expect(response.status == .ok)
                return try json(response)
            }
            #expect(metadata["name"] as? String == "fort-point/gate.jpg")
            #expect(metadata["bucket"] as? String == "spots")
            #expect(metadata["size"] as? Int == bytes.count)
            #expect(metadata["contentType"] as? String == "image/jpeg")
            #expect(metadata["owner"] as? String == "alice")
            #expect((metadata["sha256"] as? String)?.count == 64)
            #expect(metadata["timeCreated"] is String && metadata["updated"] is String)
            let photo = try #require(metadata["photo"] as? [String: Any])
            #expect(photo["width"] as? Int == 320)
            #expect(photo["takenAt"] as? String == "2022-10-02T08:15:30")
            let camera = try #require(photo["camera"] as? [String: Any])
            #expect(camera["make"] as? String == "Apple")
            let location = try #require(photo["location"] as? [String: Any])
            let (latitude, longitude) = (try #require(location["latitude"] as? Double), try #require(location["longitude"] as? Double))
            #expect(abs(latitude - 37.81) < 1e-6 && abs(longitude + 122.477) < 1e-6)
            #expect(location["altitude"] as? Double == 67)
            #expect(location["city"] as? String == "San Francisco")
            #expect(location["region"] as? String == "California")
            #expect(location["country"] as? String == "United States" && location["countryCode"] as? String == "US")
            let thumbnails = try #require(metadata["thumbnails"] as? [String: String])
            #expect(thumbnails.keys.sorted() == ["1024", "256"])
            #expect(thumbnails["256"]?.hasSuffix("/v0/b/spots/o/fort-point%2Fgate.jpg?alt=thumbnail&size=256") == true)

            // The same object under its slash path, as metadata and as bytes.
            try await client.execute(uri: "/v0/b/spots/o/fort-point/gate.jpg", method: .get, headers: auth(token)) { response in
                let reread = try json(response)
                #expect(reread["sha256"] as? String == metadata["sha256"] as? String)
            }
            try await client.execute(uri: "/v0/b/spots/o/fort-point%2Fgate.jpg?alt=media", method: .get, headers: auth(token)) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == bytes)
                #expect(response.headers[.eTag] == "\"\(metadata["sha256"] as! String)\"")
                #expect(response.headers[.contentLength] == String(bytes.count))
                #expect(response.headers[.contentType] == "image/jpeg")
            }
            try await client.execute(uri: "/v0/b/spots/o/fort-point%2Fgate.jpg?alt=thumbnail&size=256", method: .get, headers: auth(token)) { response in
                #expect(response.status == .ok)
                #expect(jpegSize(Array(buffer: response.body))?.width == 256)
            }
            try await client.execute(uri: "/v0/b/spots/o/fort-point%2Fgate.jpg?alt=thumbnail&size=77", method: .get, headers: auth(token)) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func thumbnailOfAnOrientation6PhotoIsUpright() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o?name=turned%2Fsix.jpg", method: .post, headers: auth(token), body: ByteBuffer(bytes: try fixture("orientation-6.jpg"))) { response in
                #expect(response.status == .ok)
                let photo = try #require(try json(response)["photo"] as? [String: Any])
                #expect(photo["orientation"] as? Int == 6)
                #expect(photo["width"] as? Int == 400 && photo["height"] as? Int == 300)
            }
            try await client.execute(uri: "/v0/b/spots/o/turned%2Fsix.jpg?alt=thumbnail&size=256", method: .get, headers: auth(token)) { response in
                let bytes = Array(buffer: response.body)
                let size = try #require(jpegSize(bytes))
                #expect(size.width == 192 && size.height == 256, "portrait: width and height swapped")
                #expect(!containsExif(bytes), "thumbnails carry no metadata")
            }
        }
    }

    @Test func refusesWithClearJSONErrors() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        let photo = ByteBuffer(bytes: try fixture("photos/coffee.jpg"))
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/x%2F1.jpg", method: .put, body: photo) { response in
                #expect(response.status == .unauthorized)
                let message = try errorMessage(response)
                #expect(message.contains("Bearer"))
            }
            try await client.execute(uri: "/v0/b/spots/o/x%2F1.jpg", method: .get, headers: auth("sst_wrong")) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/v0/b/spots/o/x%2F1.jpg", method: .put, headers: auth(alice), body: photo) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/v0/b/spots/o/x%2F2.jpg", method: .put, headers: auth(bob), body: photo) { response in
                #expect(response.status == .forbidden)
                let message = try errorMessage(response)
                #expect(message.contains("no rule allows create of spots/x/2.jpg for bob"))
            }
            var big = try fixture("photos/coffee.jpg")
            big += [UInt8](repeating: 0, count: 7 * 1024 * 1024 - big.count)
            try await client.execute(uri: "/v0/b/spots/o/x%2Fbig.jpg", method: .put, headers: auth(alice), body: ByteBuffer(bytes: big)) { response in
                #expect(response.status == .contentTooLarge)
                let message = try errorMessage(response)
                #expect(message.contains("6 MiB"))
            }
            try await client.execute(uri: "/v0/b/spots/o/x%2Fnote.jpg", method: .put, headers: auth(alice), body: ByteBuffer(bytes: try fixture("bad/not-a-jpeg.jpg"))) { response in
                #expect(response.status == .unsupportedMediaType)
            }
            try await client.execute(uri: "/v0/b/spots/o/x%2Fcut.jpg", method: .put, headers: auth(alice), body: ByteBuffer(bytes: try fixture("bad/truncated.jpg"))) { response in
                #expect(response.status == .unprocessableContent)
            }
            try await client.execute(uri: "/v0/b/secret/o/x%2F1.jpg", method: .get, headers: auth(alice)) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v0/b/spots/o/x%2Fnone.jpg", method: .get, headers: auth(alice)) { response in
                #expect(response.status == .notFound)
                let message = try errorMessage(response)
                #expect(message.contains("spots/x/none.jpg"))
            }
            try await client.execute(uri: "/v0/b/spots/o/x%2F1.jpg?alt=weird", method: .get, headers: auth(alice)) { response in
                #expect(response.status == .badRequest)
            }
        }
    }

    @Test(arguments: [
        "/v0/b/spots/o/..%2F..%2Fcatalog.sqlite", "/v0/b/spots/o/x/../../etc", "/v0/b/spots/o/%2e%2e%2Fx",
        "/v0/b/spots/o/x%2F%00.jpg", "/v0/b/spots/o/x%2F%zz.jpg", "/v0/b/spots/o/%2Fx.jpg", "/v0/b/spots/o/x%2F%FF.jpg",
    ])
    func pathTraversalGets400AndTouchesNothing(uri: String) async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            for method in [HTTPRequest.Method.put, .get, .delete] {
                try await client.execute(uri: uri, method: method, headers: auth(token), body: ByteBuffer(bytes: try fixture("gps.jpg"))) { response in
                    #expect(response.status == .badRequest, "\(method) \(uri)")
                }
            }
        }
        #expect((try await store.storedBlobs()).isEmpty)
    }

    @Test func overlongNamesGet400() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        try await app(store).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/x%2F" + String(repeating: "a", count: 1100), method: .get, headers: auth(token)) { response in
                #expect(response.status == .badRequest)
            }
        }
    }

    @Test func listsWithPrefixesAndStablePages() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let photo = ByteBuffer(bytes: try fixture("photos/chelsea.jpg"))
        try await app(store).test(.router) { client in
            for spot in ["a", "b", "c"] {
                for index in 1...3 {
                    try await client.execute(uri: "/v0/b/spots/o/\(spot)%2F\(index).jpg", method: .put, headers: auth(token), body: photo) { response in
                        #expect(response.status == .ok)
                    }
                }
            }
            try await client.execute(uri: "/v0/b/spots/o?delimiter=/", method: .get, headers: auth(token)) { response in
                let page = try json(response)
                #expect(page["prefixes"] as? [String] == ["a/", "b/", "c/"])
                #expect((page["items"] as? [Any])?.isEmpty == true)
            }
            var names: [String] = []
            var token2: String?
            repeat {
                let query = "prefix=&maxResults=4" + (token2.map { "&pageToken=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" } ?? "")
                token2 = try await client.execute(uri: "/v0/b/spots/o?\(query)", method: .get, headers: auth(token)) { response in
                    let page = try json(response)
                    let items = try #require(page["items"] as? [[String: Any]])
                    #expect(items.count <= 4)
                    names += items.compactMap { $0["name"] as? String }
                    return page["nextPageToken"] as? String
                }
            } while token2 != nil
            #expect(names == ["a/1.jpg", "a/2.jpg", "a/3.jpg", "b/1.jpg", "b/2.jpg", "b/3.jpg", "c/1.jpg", "c/2.jpg", "c/3.jpg"])
            try await client.execute(uri: "/v0/b/spots/o?pageToken=garbage!", method: .get, headers: auth(token)) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: "/v0/b/spots/o/b%2F2.jpg", method: .delete, headers: auth(token)) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/v0/b/spots/o/b%2F2.jpg", method: .delete, headers: auth(token)) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/v0/b/spots/o?prefix=b/", method: .get, headers: auth(token)) { response in
                let page = try json(response)
                #expect((page["items"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["b/1.jpg", "b/3.jpg"])
            }
        }
    }

    @Test func sixteenConcurrentUploadsOverTheNetworkYieldFourSuccesses() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let photo = ByteBuffer(bytes: try fixture("photos/astronaut.jpg"))
        let statuses = try await app(store).test(.live) { client in
            try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        try await client.execute(uri: "/v0/b/spots/o/race%2F\(index).jpg", method: .put, headers: auth(token), body: photo) { $0.status }
                    }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
        }
        #expect(statuses.filter { $0 == .ok }.count == 4)
        #expect(statuses.filter { $0 == .conflict }.count == 12)
        #expect(try store.temporaryFiles().isEmpty)
    }
}

/// Width and height from a JPEG's SOF marker, or nil.
func jpegSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
    var index = 2
    while index + 9 < bytes.count {
        guard bytes[index] == 0xFF else { return nil }
        let marker = bytes[index + 1]
        let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
        if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
            return (Int(bytes[index + 7]) << 8 | Int(bytes[index + 8]), Int(bytes[index + 5]) << 8 | Int(bytes[index + 6]))
        }
        index += 2 + length
    }
    return nil
}

/// Whether the bytes hold an EXIF APP1 segment.
func containsExif(_ bytes: [UInt8]) -> Bool {
    let signature = Array("Exif\0\0".utf8)
    return bytes.count > 6 && (0..<(bytes.count - 6)).contains { Array(bytes[$0..<$0 + 6]) == signature }
}

/// Names of new objects.
extension HTTPTests {
    /// A new object never gets a name that looks like another (a second spot `ei` + U+200B +
    /// `ffel` beside `eiffel`); one stored before that rule stays readable and deletable.
    @Test func namesThatLookLikeOthersAreRefusedForNewObjectsOnly() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("photos/rocket.jpg")
        try await app(store).test(.router) { client in
            for name in ["ei%E2%80%8Bffel%2F1.jpg", "%F0%9F%93%B7%EF%B8%8Fspot%2F1.jpg", "spot%C2%A0x%2F1.jpg"] {
                let response = try await client.execute(uri: "/v0/b/spots/o/\(name)", method: .put, headers: auth(token), body: ByteBuffer(bytes: bytes))
                #expect(response.status == .badRequest, "\(name)")
                #expect(try errorMessage(response).contains("would make two names look the same"))
            }
            let old = try ObjectPath(bucket: "spots", name: "family/\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}.jpg")
            _ = try await store.service.catalog.commit(
                NewObject(path: old, digest: Digest(bytes: Array(repeating: 7, count: 32)), size: 10, contentType: "image/jpeg", owner: "alice"),
                admission: SpotAdmission())
            let uri = "/v0/b/spots/o/\(ObjectPath.urlSegment(old.name))"
            #expect(try await client.execute(uri: uri, method: .get, headers: auth(token)).status == .ok)
            let listing = try await client.execute(uri: "/v0/b/spots/o?prefix=family%2F", method: .get, headers: auth(token))
            #expect((try json(listing)["items"] as? [Any])?.count == 1)
            #expect(try await client.execute(uri: uri, method: .delete, headers: auth(token)).status == .noContent)
        }
    }
}

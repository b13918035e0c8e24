import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TestSupport
@testable import SpotServer

@Suite struct ByteRangeTests {
    @Test(arguments: [
        ("bytes=0-99", ByteRange.part(0..<100)), ("bytes=100-", .part(100..<1000)), ("bytes=-500", .part(500..<1000)),
        ("bytes=-5000", .part(0..<1000)), ("bytes=990-5000", .part(990..<1000)), ("bytes=999-999", .part(999..<1000)),
        ("bytes=1000-", .unsatisfiable), ("bytes=1000-1001", .unsatisfiable), ("bytes=-0", .unsatisfiable),
        ("bytes=5-2", .whole), ("bytes=0-1,5-9", .whole), ("items=0-1", .whole), ("bytes=a-b", .whole), ("bytes=-", .whole),
        ("bytes=99999999999999999999-", .unsatisfiable),
    ])
    func readsOneRange(header: String, expected: ByteRange) {
        #expect(ByteRange(header: header, size: 1000) == expected, "\(header)")
    }

    @Test func anEmptyBodyHasNoSatisfiableRange() {
        #expect(ByteRange(header: "bytes=0-", size: 0) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=-1", size: 0) == .unsatisfiable)
        #expect(ByteRange(header: nil, size: 0) == .whole)
    }
}

/// Downloads over HTTP: Range (206, suffix ranges, 416), If-None-Match (304), HEAD.
extension HTTPTests {
    @Test func downloadsHonourRangeConditionalsAndHead() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let bytes = try fixture("photos/rocket.jpg")
        let size = bytes.count
        try await app(store).test(.router) { client in
            let etag = try await client.execute(uri: "/v0/b/spots/o/r%2F1.jpg", method: .put, headers: auth(token), body: ByteBuffer(bytes: bytes)) { response in
                #expect(response.status == .ok)
                return "\"\(try json(response)["sha256"] as? String ?? "")\""
            }
            let uri = "/v0/b/spots/o/r%2F1.jpg?alt=media"
            func get(_ extra: HTTPFields, method: HTTPRequest.Method = .get) async throws -> TestResponse {
                var headers = auth(token)
                headers.append(contentsOf: extra)
                return try await client.execute(uri: uri, method: method, headers: headers)
            }
            var response = try await get([.range: "bytes=-500"])
            #expect(response.status == .partialContent)
            #expect(Array(buffer: response.body) == Array(bytes.suffix(500)), "a suffix range is the last bytes, not the first")
            #expect(response.headers[.contentRange] == "bytes \(size - 500)-\(size - 1)/\(size)")
            #expect(response.headers[.contentLength] == "500")

            response = try await get([.range: "bytes=10-19"])
            #expect(response.status == .partialContent)
            #expect(Array(buffer: response.body) == Array(bytes[10..<20]))

            response = try await get([.range: "bytes=\(size)-"])
            #expect(response.status == .rangeNotSatisfiable)
            #expect(response.headers[.contentRange] == "bytes */\(size)")

            response = try await get([.range: "bytes=0-1,5-6"])
            #expect(response.status == .ok, "multiple ranges are ignored")
            #expect(Array(buffer: response.body) == bytes)

            // If-Range: the range only while the client's copy is this content.
            response = try await get([.range: "bytes=10-19", .ifRange: etag])
            #expect(response.status == .partialContent)
            for other in ["\"0000\"", "W/\(etag)", "Wed, 21 Oct 2015 07:28:00 GMT"] {
                response = try await get([.range: "bytes=10-19", .ifRange: other])
                #expect(response.status == .ok, "If-Range: \(other)")
                #expect(Array(buffer: response.body) == bytes)
            }

            response = try await get([.ifNoneMatch: etag])
            #expect(response.status == .notModified)
            #expect(response.body.readableBytes == 0)
            response = try await get([.ifNoneMatch: "\"something-else\""])
            #expect(response.status == .ok)

            response = try await get([:], method: .head)
            #expect(response.status == .ok)
            #expect(response.headers[.contentLength] == String(size))
            #expect(response.headers[.eTag] == etag)
            #expect(response.body.readableBytes == 0)

            try await client.execute(uri: "/v0/b/spots/o/r%2F1.jpg?alt=thumbnail&size=256", method: .get, headers: auth(token)) { thumb in
                #expect(thumb.headers[.cacheControl]?.contains("immutable") == true)
                var conditional = auth(token)
                conditional[.ifNoneMatch] = thumb.headers[.eTag]
                try await client.execute(uri: "/v0/b/spots/o/r%2F1.jpg?alt=thumbnail&size=256", method: .get, headers: conditional) { again in
                    #expect(again.status == .notModified)
                }
            }
        }
    }

    /// Uploaded HTML or SVG never runs on the service's origin: every object answer carries
    /// nosniff and a sandbox policy, and active types are attachments whatever the uploader
    /// asked, for the owner and for anyone holding a download token alike.
    @Test func activeContentIsAnAttachmentInASandbox() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("mallory")
        let page = ByteBuffer(string: "<html><script>alert(document.cookie)</script></html>")
        let svg = ByteBuffer(string: #"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#)
        try await app(store).test(.router) { client in
            func upload(_ name: String, _ type: String, _ body: ByteBuffer) async throws -> String? {
                var headers = auth(token)
                headers[.contentType] = type
                return try await client.execute(uri: "/v0/b/users/o/mallory%2F\(name)", method: .put, headers: headers, body: body) { response in
                    #expect(response.status == .ok)
                    return (try json(response)["downloadTokens"] as? String)
                }
            }
            let pageToken = try await upload("x.html", "text/html; charset=utf-8", page)
            _ = try await upload("x.svg", "IMAGE/SVG+XML", svg)
            // Types a browser reads as another: the last of a list, or not one type at all.
            _ = try await upload("list.html", "video/mp4,text/html", page)
            _ = try await upload("path.html", "video/../text/html", page)
            _ = try await upload("spaced.html", "video/mp4 text/html", page)
            _ = try await upload("inline.html", "text/html", page)
            _ = try await upload("note.txt", "text/plain", ByteBuffer(string: "hello"))
            for name in ["inline.html", "note.txt"] {
                var headers = auth(token)
                headers[.contentType] = "application/json"
                let patched = try await client.execute(
                    uri: "/v0/b/users/o/mallory%2F\(name)", method: .patch, headers: headers, body: ByteBuffer(string: #"{"contentDisposition": "inline"}"#))
                #expect(patched.status == .ok)
            }
            for (name, disposition) in [
                ("x.html", "attachment; filename*=UTF-8''x.html"), ("x.svg", "attachment; filename*=UTF-8''x.svg"),
                ("inline.html", "attachment; filename*=UTF-8''inline.html"), ("note.txt", "inline"),
                ("list.html", "attachment; filename*=UTF-8''list.html"), ("path.html", "attachment; filename*=UTF-8''path.html"),
                ("spaced.html", "attachment; filename*=UTF-8''spaced.html"),
            ] {
                try await client.execute(uri: "/v0/b/users/o/mallory%2F\(name)?alt=media", method: .get, headers: auth(token)) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.xContentTypeOptions] == "nosniff")
                    #expect(response.headers[.contentSecurityPolicy]?.hasPrefix("sandbox;") == true)
                    #expect(response.headers[.contentDisposition] == disposition, "\(name)")
                }
            }
            let opened = try #require(pageToken)
            try await client.execute(uri: "/v0/b/users/o/mallory%2Fx.html?alt=media&token=\(opened)", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentDisposition]?.hasPrefix("attachment") == true)
                #expect(response.headers[.contentSecurityPolicy]?.hasPrefix("sandbox;") == true)
            }
            // Every answer, metadata, refusals and unknown routes included.
            for uri in ["/v0/b/users/o/mallory%2Fx.html", "/v0/b/users/o/nobody%2Fx", "/nowhere"] {
                try await client.execute(uri: uri, method: .get, headers: auth(token)) { response in
                    #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(uri)")
                }
            }
        }
    }
}

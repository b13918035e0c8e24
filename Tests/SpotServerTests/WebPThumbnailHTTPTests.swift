import Foundation
import Hummingbird
import HummingbirdTesting
import Media
import SpotCore
import SpotService
import Testing
import TestSupport

/// `?alt=thumbnail&size=N&format=webp`: a WebP thumbnail of every size, stored and served as
/// the JPEG ones are (its own ETag, kept answers per URL); metadata names the JPEG ones.
extension HTTPTests {
    @Test func webPThumbnailsAreServedBesidesTheJPEGOnes() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        try await app(store).test(.live) { client in
            let object = "/v0/b/spots/o/turned%2Fsix.jpg"
            #expect(try await status(client, .put, object, alice, body: try fixture("orientation-6.jpg")) == .ok)
            let metadata = try await client.execute(uri: object, method: .get, headers: auth(alice)) { try json($0) }
            let urls = try #require(metadata["thumbnails"] as? [String: String])
            #expect(urls.keys.sorted() == ["1024", "256"] && urls.values.allSatisfy { !$0.contains("format=") }, "JPEG stays the default")

            var etags: [String: String] = [:]
            for format in ["", "&format=webp"] {
                let uri = "\(object)?alt=thumbnail&size=256\(format)"
                try await client.execute(uri: uri, method: .get, headers: auth(alice)) { response in
                    #expect(response.status == .ok)
                    let bytes = Array(buffer: response.body)
                    let analysis = try PhotoAnalyzer(thumbnailSizes: []).analyze(bytes)
                    #expect(analysis.format == (format.isEmpty ? .jpeg : .webp))
                    #expect(response.headers[.contentType] == analysis.format.contentType)
                    #expect(analysis.metadata.width == 192 && analysis.metadata.height == 256, "upright: \(format)")
                    #expect(analysis.metadata.orientation == 1 && analysis.metadata.cameraMake == nil, "no metadata: \(format)")
                    #expect(response.headers[.eTag] == "\"\(BlobWriter.digest(of: bytes).hex)\"")
                    #expect(response.headers[.cacheControl]?.contains("immutable") == true)
                    etags[format] = response.headers[.eTag]
                }
                var conditional = auth(alice)
                conditional[.ifNoneMatch] = etags[format]
                try await client.execute(uri: uri, method: .get, headers: conditional) { #expect($0.status == .notModified) }
            }
            #expect(Set(etags.values).count == 2, "each format has its own ETag")

            try await client.execute(uri: "\(object)?alt=thumbnail&size=1024&format=webp", method: .get, headers: auth(alice)) { response in
                #expect(response.status == .ok)
                let size = try PhotoAnalyzer(thumbnailSizes: []).analyze(Array(buffer: response.body)).metadata
                #expect(size.width == 300 && size.height == 400, "never upscaled, upright")
            }
            try await client.execute(uri: "\(object)?alt=thumbnail&size=256&format=gif", method: .get, headers: auth(alice)) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("format=webp"))
            }
            try await client.execute(uri: "\(object)?alt=thumbnail&size=77&format=webp", method: .get, headers: auth(alice)) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body).contains("sizes: 256, 1024"))
            }
        }
    }

    @Test func anImageWithAlphaGetsAWebPThumbnailWithAlpha() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        try await app(store).test(.router) { client in
            let object = "/v0/b/spots/o/glass%2Falpha.png"
            #expect(try await status(client, .put, object, alice, body: try fixture("alpha.png")) == .ok)
            for (format, type) in [("", "image/png"), ("&format=webp", "image/webp")] {
                try await client.execute(uri: "\(object)?alt=thumbnail&size=256\(format)", method: .get, headers: auth(alice)) { response in
                    #expect(response.headers[.contentType] == type)
                    // An image with alpha has PNG thumbnails: the analysis of this one shows whether it kept its alpha.
                    let analysis = try PhotoAnalyzer(thumbnailSizes: [16]).analyze(Array(buffer: response.body))
                    #expect(analysis.thumbnails.first?.contentType == "image/png", "\(type) keeps the alpha")
                }
            }
        }
    }
}

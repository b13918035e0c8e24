import Foundation
import Hummingbird
import HummingbirdTesting
import Media
import SpotCore
import Testing
import TestSupport

/// HEIC, AVIF and WebP photos through a real server: sniffed whatever type the client
/// claims, accepted by the default rules into spots with GPS, city and thumbnails; damaged
/// ones refused with 422 while the server keeps serving; positions removed for non-owners.
extension HTTPTests {
    @Test func phonePhotosAreFirstClassPhotos() async throws {
        let store = try TestStore()
        let (_, alice) = try await store.user("alice")
        let (_, bob) = try await store.user("bob")
        // (a small HEIC as a phone writes it; the 12 MP iPhone files are decoded in MediaTests)
        let heic = try fixture("heif/gps.heic")
        let expected = try #require(ExifReader.read(photo: heic).location)
        try await app(store).test(.live) { client in
            func metadata(_ uri: String, _ token: String) async throws -> [String: Any] {
                try await client.execute(uri: uri, method: .get, headers: auth(token)) { response in
                    #expect(response.status == .ok)
                    return try json(response)
                }
            }
            func bytes(_ uri: String, _ token: String) async throws -> [UInt8] {
                try await client.execute(uri: uri, method: .get, headers: auth(token)) { response in
                    #expect(response.status == .ok, "\(uri)")
                    return Array(buffer: response.body)
                }
            }
            // curl's default type, as a new user would send it
            let object = "/v0/b/spots/o/trapani%2FIMG_0001.HEIC"
            #expect(try await status(client, .put, object, alice, body: heic, contentType: "application/x-www-form-urlencoded") == .ok)
            let stored = try await metadata(object, alice)
            #expect(stored["contentType"] as? String == "image/heic")
            let photo = try #require(stored["photo"] as? [String: Any])
            #expect(photo["width"] as? Int == 512 && photo["height"] as? Int == 512)
            let location = try #require(photo["location"] as? [String: Any])
            #expect(abs((location["latitude"] as? Double ?? 0) - expected.latitude) < 1e-6)
            let city = try #require(bundledGeocoder.place(latitude: expected.latitude, longitude: expected.longitude)?.city)
            #expect(location["city"] as? String == city)
            let thumbnail = try await bytes("\(object)?alt=thumbnail&size=256", alice)
            let decoded = try PhotoAnalyzer(thumbnailSizes: []).analyze(thumbnail)
            #expect(decoded.format == .jpeg && decoded.metadata.width == 256 && decoded.metadata.height == 256)
            #expect(decoded.metadata.location == nil && decoded.metadata.cameraModel == nil, "no metadata in thumbnails")

            // Into a home folder too: the type is the bytes', not curl's, and the photo is analysed.
            let home = "/v0/b/users/o/alice%2Fphone.bin"
            #expect(try await status(client, .put, home, alice, body: heic, contentType: "application/x-www-form-urlencoded") == .ok)
            let homeMetadata = try await metadata(home, alice)
            #expect(homeMetadata["contentType"] as? String == "image/heic")
            #expect((homeMetadata["photo"] as? [String: Any])?["location"] != nil)

            for (path, type) in [("heif/gps.webp", "image/webp"), ("heif/paris_icc_exif_xmp.avif", "image/avif")] {
                let uri = "/v0/b/spots/o/trapani%2F\((path as NSString).lastPathComponent)"
                #expect(try await status(client, .put, uri, alice, body: try fixture(path)) == .ok, "\(path)")
                #expect(try await metadata(uri, alice)["contentType"] as? String == type)
            }

            // Damaged files: 422 naming the format, and the server goes on.
            for (path, word) in [("bad/truncated.heic", "HEIC"), ("bad/corrupt.heic", "HEIC"), ("bad/truncated.webp", "WebP"), ("bad/huge-ispe.heic", "megapixels")] {
                try await client.execute(uri: "/v0/b/spots/o/bad%2F1.heic", method: .put, headers: auth(bob), body: ByteBuffer(bytes: try fixture(path))) { response in
                    #expect(response.status == .unprocessableContent, "\(path)")
                    let message = String(buffer: response.body)
                    #expect(message.contains(word), "\(path): \(message)")
                }
            }
            #expect(try await status(client, .get, "/healthz") == .ok)

            // Hidden: bob gets the same length without any position; alice gets her upload.
            let hide = ByteBuffer(string: #"{"hideLocation": true}"#)
            #expect(try await client.execute(uri: "/v0/b/spots/spots/trapani", method: .patch, headers: auth(alice), body: hide) { $0.status } == .ok)
            let seen = try await bytes("\(object)?alt=media", bob)
            #expect(seen.count == heic.count && seen != heic)
            #expect(ExifReader.read(photo: seen).location == nil)
            #expect(ExifReader.read(photo: seen).cameraModel == "Fixture")
            #expect(try await bytes("\(object)?alt=media", alice) == heic)
        }
    }
}

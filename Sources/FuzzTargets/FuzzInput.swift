import Foundation
import HummingbirdCore
import Media
import SpotCore
import SpotService
import Access

import SQLCatalog
import SpotServer

/// One fuzzer input run through the parsers that see untrusted bytes. Thrown errors are
/// expected answers (a 4xx for the client); only a crash, trap or sanitizer report is a bug.
///
/// The inner parsers of `SpotServer` and `SQLCatalog` (Range, If-None-Match, request
/// ids, page tokens) are `package` declarations: reached from here in every build.
public enum FuzzInput {
    /// What the rest of an input is fed to, chosen by its first byte. An input that starts
    /// like a photo (the fixtures, crash files) is an image as a whole.
    public enum Parser: UInt8, CaseIterable, Sendable {
        /// The rest is an image (JPEG, PNG, HEIF, WebP): sniffing, header, EXIF, decoding,
        /// thumbnails, GPS removal (the HEIF box walker included).
        case image = 0x69  // "i"
        /// The rest is an Exif block (TIFF after `Exif\0\0`), wrapped in a JPEG APP1 and a PNG eXIf.
        case exif = 0x65  // "e"
        /// The rest is a rules file: lexed, parsed, checked, then asked about a few requests.
        case rules = 0x72  // "r"
        /// The rest is `bucket`, newline, object name; also a request target (path and query).
        case path = 0x70  // "p"
        /// The rest is header values separated by newlines: Range, If-None-Match, X-Request-Id.
        case headers = 0x68  // "h"
        /// The rest is a page token (listing and spot search), or a signed URL's query values.
        case token = 0x74  // "t"
    }

    /// Feeds `bytes` to the parser its first byte names (see `Parser`); images as a whole.
    public static func exercise(_ bytes: [UInt8]) {
        if ImageSniffer.format(of: bytes) != nil {
            image(bytes)
            return
        }
        guard let first = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        switch Parser(rawValue: first) {
        case .image?: image(rest)
        case .exif?: exif(rest)
        case .rules?: rules(String(decoding: rest, as: UTF8.self))
        case .path?: path(String(decoding: rest, as: UTF8.self))
        case .headers?: headers(String(decoding: rest, as: UTF8.self))
        case .token?: token(String(decoding: rest, as: UTF8.self))
        case nil: image(bytes)
        }
    }

    // MARK: Images

    /// A small pixel limit keeps each run fast; decompression bombs are refused either way.
    private static let analyzer = PhotoAnalyzer(thumbnailSizes: [64, 16], maxPixels: 4_000_000)

    static func image(_ bytes: [UInt8]) {
        _ = ImageSniffer.format(of: bytes)
        _ = ExifReader.read(jpeg: bytes)
        do {
            _ = try analyzer.analyze(bytes)
        } catch {
            // An upload is answered with the error's status: a bad image must be a 4xx, never a 500.
            precondition(error.kind.httpStatusCode < 500, "a malformed image gives \(error.kind.httpStatusCode): \(error.message)")
        }
        // What is served to others must be without a readable position (or not served).
        if let stripped = LocationStripper.removingLocation(from: bytes) {
            let location = ExifReader.read(photo: stripped).location
            precondition(location == nil, "LocationStripper left a readable GPS position: \(String(describing: location))")
        }
    }

    static func exif(_ block: [UInt8]) {
        let payload = Array("Exif\0\0".utf8) + block.prefix(65_533 - 6)
        let length = payload.count + 2
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + [0xFF, 0xD9]
        image(jpeg)
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let count = UInt32(block.count)
        png += [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
        png += Array("eXIf".utf8) + block + [0, 0, 0, 0]
        _ = LocationStripper.removingLocation(from: png)
    }

    // MARK: Rules

    static func rules(_ text: String) {
        guard let policy = try? RulesPolicy(text: text, fileName: "fuzz.rules") else { return }
        let object = try? ObjectPath(bucket: "photos", name: "paris/eiffel.jpg")
        let stored = object.map {
            StoredObject(
                path: $0, digest: Digest(bytes: Array(repeating: 7, count: 32)), size: 1234, contentType: "image/jpeg",
                owner: "alice", createdAt: Date(timeIntervalSince1970: 1_700_000_000),
                updatedAt: Date(timeIntervalSince1970: 1_700_000_000))
        }
        let requests = [
            AccessRequest(auth: nil, operation: .get, bucket: "photos", name: "paris/eiffel.jpg", resource: stored),
            AccessRequest(
                auth: Auth(uid: "alice", claims: ["admin": "true"]), operation: .create, bucket: "photos", name: "paris/new.jpg",
                spot: SpotState(bucket: "photos", id: "paris", owner: "alice", objectCount: 3),
                incoming: IncomingObject(size: 4_000_000, contentType: "image/png")),
            AccessRequest(auth: Auth(uid: "bob"), operation: .list, bucket: "photos", name: ""),
            AccessRequest(auth: Auth(uid: "bob"), operation: .delete, bucket: "photos", name: "a/b/c/d.jpg", resource: stored),
            AccessRequest(
                auth: Auth(uid: "carol"), operation: .update, bucket: "spots", name: "eiffel/1.jpg",
                spot: SpotState(bucket: "spots", id: "eiffel", owner: "carol", objectCount: 4, hidesLocation: true),
                resource: stored, incoming: IncomingObject(size: 6 * 1024 * 1024, contentType: "image/jpeg")),
            AccessRequest(auth: Auth(uid: "dave"), operation: .get, bucket: "users", name: "dave/notes/today.png", resource: stored),
        ]
        for request in requests { _ = policy.decide(request) }
    }

    // MARK: Paths

    static func path(_ text: String) {
        let (bucket, name) = split(text)
        if let path = try? ObjectPath(bucket: bucket, name: name) {
            _ = path.segments
            _ = path.topFolder
            _ = path.fileName
            _ = ObjectPath.urlSegment(path.name)
            // A valid path survives a round trip through its URL form and the server's decoder.
            let decoded = PercentDecoding.decode(ObjectPath.urlSegment(path.name)[...])
            precondition(decoded == path.name, "urlSegment of \(path) does not decode to its name")
        }
        try? ObjectPath.validate(bucket: bucket)
        // The same text as a request target: `/v0/b/{bucket}/o/{name}?query`.
        let uri = URI(text)
        _ = uri.path
        let parameters = uri.queryParameters
        _ = parameters.get("expires", as: Int64.self)
        _ = parameters.get("size", as: Int.self)
        _ = parameters.get("expiresIn").flatMap(Double.init)
        if let name = PercentDecoding.decode(uri.path[...]) { _ = try? ObjectPath(bucket: "b", name: name) }
    }

    // MARK: Headers

    static func headers(_ text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let value = lines.first ?? ""
        for size: Int64 in [0, 1, 1000, Int64.max] {
            if case .part(let range) = ByteRange(header: value, size: size) {
                precondition(range.lowerBound >= 0 && range.upperBound <= size && !range.isEmpty, "bad range \(range) of \(size)")
            }
        }
        let digest = Digest(bytes: Array(repeating: 0xAB, count: 32))
        for line in lines {
            _ = ObjectAnswers.matches(line, etag: digest)
            _ = RequestLog.sanitizedID(line)
        }
        _ = Int64(value)  // Content-Length
        _ = ImageFormat(contentType: value)
        let signer = URLSigner(key: Array(repeating: 1, count: 32))
        if let path = try? ObjectPath(bucket: "b", name: "a.jpg") {
            let grant = DownloadGrant(expires: lines.count > 1 ? Int64(lines[1]) ?? 0 : 0, signedBy: lines.last ?? "", signedAt: 0)
            try? signer.verify(value, for: path, grant)
            try? signer.verify(signer.signature(for: path, grant), for: path, grant)
        }
    }

    // MARK: Tokens

    static func token(_ text: String) {
        let (first, rest) = split(text)
        _ = Base64URL.decode(first)
        for delimiter in [nil, "/"] as [String?] {
            _ = try? ListingPlan(ListQuery(bucket: "b", prefix: rest, delimiter: delimiter, pageToken: first))
        }
        let encoded = Base64URL.encode(first)
        precondition(Base64URL.decode(encoded) == first, "base64url does not round-trip")
        _ = try? ListingPlan(ListQuery(bucket: "b", prefix: "", delimiter: "/", pageToken: encoded))
        for criterion: SpotQuery.Criterion in [.city(rest.isEmpty ? "Paris" : rest), .near(latitude: 48.85, longitude: 2.29, radiusKm: 10)] {
            _ = try? SpotSearchPlan(SpotQuery(bucket: "b", criterion: criterion, pageToken: first))
            _ = try? SpotSearchPlan(SpotQuery(bucket: "b", criterion: criterion, pageToken: encoded))
        }
        let numbers = rest.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        if numbers.count >= 3, let latitude = numbers[0], let longitude = numbers[1], let radius = numbers[2] {
            _ = try? SpotSearchPlan(SpotQuery(bucket: "b", criterion: .near(latitude: latitude, longitude: longitude, radiusKm: radius)))
        }
    }

    /// `text` split at its first newline: (before, after); after is "" without one.
    private static func split(_ text: String) -> (String, String) {
        guard let newline = text.firstIndex(of: "\n") else { return (text, "") }
        return (String(text[..<newline]), String(text[text.index(after: newline)...]))
    }
}

import Foundation
import Hummingbird
import NIOCore
import SpotCore
import SpotService

/// Answers that serve an object's bytes or a thumbnail, with their validators and the
/// headers that keep user content from running on the service's origin.
extension ServiceRoutes {
    /// The bytes of the object at `path`, honouring `If-None-Match` (304), one `Range` (206,
    /// or 416 when unsatisfiable) unless `If-Range` names other content, and `HEAD` (headers
    /// only); sandboxed, and an attachment when its type is active (`UserContentHeaders`).
    func media(_ object: Download, at path: ObjectPath, request: Request) async throws -> Response {
        // A page of this origin could still load an uploaded script or style sheet by name
        // (nosniff lets a declared type through): the browser says when it would run one.
        if let destination = request.headers[.secFetchDest], ObjectAnswers.executingDestinations.contains(destination) {
            throw SpotError(.forbidden, "objects are data, never loaded as a \(destination); fetch them, or show images and media")
        }
        var headers = HTTPFields()
        headers[.eTag] = "\"\(object.digest.hex)\""
        headers[.acceptRanges] = "bytes"
        if ObjectAnswers.matches(request.headers[.ifNoneMatch], etag: object.digest) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = object.contentType
        headers[.cacheControl] = object.settings.cacheControl
        headers[.contentDisposition] = UserContentHeaders.disposition(
            for: object.contentType, asked: object.settings.contentDisposition, fileName: path.fileName)
        headers[.contentSecurityPolicy] = UserContentHeaders.contentSecurityPolicy
        headers[.contentEncoding] = object.settings.contentEncoding
        headers[.contentLanguage] = object.settings.contentLanguage
        let status: HTTPResponse.Status
        let range: Range<Int64>
        let asked = ObjectAnswers.matchesIfRange(request.headers[.ifRange], etag: object.digest) ? request.headers[.range] : nil
        switch ByteRange(header: asked, size: object.size) {
        case .whole:
            (status, range) = (.ok, 0..<object.size)
        case .part(let part):
            (status, range) = (.partialContent, part)
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(object.size)"
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(object.size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
        headers[.contentLength] = String(range.count)
        guard request.method != .head else { return Response(status: status, headers: headers) }
        // The first chunk is read before the head goes out: a blob lost since the catalog
        // named it answers 500 with the reason, not a 200 cut off after its headers.
        var chunks = service.contents(of: object.digest, range: range).makeAsyncIterator()
        let first = try await chunks.next()
        return Response(status: status, headers: headers, body: ResponseBody(contentLength: range.count) { [chunks] writer in
            // Chunks go out in batches of about 512 KiB: each write is a hop to the
            // connection's event loop, and a remote blob arrives in chunks of 64 KiB or less.
            var rest = chunks
            var batch = first.map { [$0] } ?? []
            while let chunk = try await rest.next() {
                batch.append(chunk)
                if batch.reduce(0, { $0 + $1.readableBytes }) >= 512 << 10 {
                    try await writer.write(contentsOf: batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            try await writer.write(contentsOf: batch)
            try await writer.finish(nil)
        })
    }

    /// The answer to a `GET` or `HEAD` of `thumbnail` of the object at `path`: its headers
    /// (with `cacheControl`), and its status and bytes: 304 without bytes when `If-None-Match`
    /// names it, none for a `HEAD`.
    func thumbnailAnswer(
        _ thumbnail: Thumbnail, of path: ObjectPath, request: Request, cacheControl: String
    ) async throws -> (HTTPFields, (status: HTTPResponse.Status, body: ByteBuffer?)) {
        guard let bytes = try await service.blobs.read(thumbnail.digest) else {
            throw SpotError(.internal, "thumbnail blob \(thumbnail.digest) of \(path) is missing; run `spotstore fsck`")
        }
        var headers = HTTPFields()
        headers[.contentType] = thumbnail.contentType
        headers[.eTag] = "\"\(thumbnail.digest.hex)\""
        headers[.cacheControl] = cacheControl
        if ObjectAnswers.matches(request.headers[.ifNoneMatch], etag: thumbnail.digest) { return (headers, (.notModified, nil)) }
        headers[.contentLength] = String(bytes.count)
        return (headers, (.ok, request.method == .get ? ByteBuffer(bytes: bytes) : nil))
    }
}

/// The validators of object answers.
package enum ObjectAnswers {
    /// The `Sec-Fetch-Dest` values of loads that would run or apply what they load.
    static let executingDestinations: Set<String> = [
        "script", "worker", "sharedworker", "serviceworker", "audioworklet", "paintworklet", "style", "xslt", "manifest",
    ]

    /// Whether a `Range` may be served under `If-Range` (RFC 9110 §13.1.5): with no
    /// `If-Range`, or one naming this content's strong ETag. A date or another tag means the
    /// client's copy may differ: it gets the whole content.
    static func matchesIfRange(_ ifRange: String?, etag digest: Digest) -> Bool {
        guard let ifRange else { return true }
        return ifRange.trimmingCharacters(in: .whitespaces) == "\"\(digest.hex)\""
    }

    /// Whether an `If-None-Match` header names this content's ETag (or is `*`).
    package static func matches(_ ifNoneMatch: String?, etag digest: Digest) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch.split(separator: ",").contains { tag in
            let trimmed = tag.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || trimmed == "\"\(digest.hex)\"" || trimmed == "W/\"\(digest.hex)\""
        }
    }

}

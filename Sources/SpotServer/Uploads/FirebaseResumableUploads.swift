import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SpotAPI
import SpotCore
import SpotService

/// Firebase Storage's resumable upload protocol on `POST /v0/b/{bucket}/o`, as its SDKs speak
/// it: `X-Goog-Upload-Protocol: resumable` with `X-Goog-Upload-Command: start`, then
/// `upload`, `upload, finalize`, `finalize`, `query` or `cancel` at the upload URL the start
/// answers. The upload is an upload session of the catalog, so any instance goes on.
extension ObjectRoutes {
    static let uploadCommand = HTTPField.Name("X-Goog-Upload-Command")!
    static let uploadOffset = HTTPField.Name("X-Goog-Upload-Offset")!
    static let uploadStatus = HTTPField.Name("X-Goog-Upload-Status")!
    static let uploadURL = HTTPField.Name("X-Goog-Upload-URL")!
    static let sizeReceived = HTTPField.Name("X-Goog-Upload-Size-Received")!
    static let chunkGranularity = HTTPField.Name("X-Goog-Upload-Chunk-Granularity")!
    /// The declared size and type of a resumable start: the web SDK's spelling, then the iOS SDK's.
    static let declaredLength = [HTTPField.Name("X-Goog-Upload-Header-Content-Length")!, HTTPField.Name("X-Goog-Upload-Content-Length")!]
    static let declaredType = [HTTPField.Name("X-Goog-Upload-Header-Content-Type")!, HTTPField.Name("X-Goog-Upload-Content-Type")!]
    /// The chunk size resumable clients are told to use multiples of (Firebase's 256 KiB).
    static let granularity = 256 * 1024

    /// `X-Goog-Upload-Command: start`: records the session and answers its upload URL.
    func startSession(_ request: Request, _ context: SpotRequestContext) async throws -> Response {
        let path = try namedPath(request, context)
        let user = try await authenticate(request, context)
        let asked = try await metadataBody(of: request)
        let lengthText = Self.declaredLength.lazy.compactMap { request.headers[$0] }.first
        let length = try lengthText.map { text throws(SpotError) in
            guard let length = Int64(text), length >= 0 else {
                throw SpotError(.badRequest, "X-Goog-Upload-Header-Content-Length must be a whole number of bytes, not '\(text)'")
            }
            return length
        }
        let contentType = Self.declaredType.lazy.compactMap { request.headers[$0] }.first ?? asked.change.contentType
        let session = try await service.startUploadSession(
            path, by: user, contentType: contentType, declaredSize: length, details: try Self.details(of: asked, at: path))
        var url = URLComponents()
        url.queryItems = [
            .init(name: "name", value: path.name), .init(name: "uploadType", value: "resumable"),
            .init(name: "upload_id", value: session.id), .init(name: "upload_protocol", value: "resumable"),
        ]
        var headers = HTTPFields()
        headers[Self.uploadStatus] = "active"
        headers[Self.uploadURL] = "\(baseURL(request, context))/v0/b/\(path.bucket)/o?\(url.percentEncodedQuery ?? "")"
        headers[Self.chunkGranularity] = String(Self.granularity)
        return Response(status: .ok, headers: headers)
    }

    /// A command at a session's upload URL.
    func continueSession(_ id: String, _ request: Request, _ context: SpotRequestContext) async throws -> Response {
        let user = try await authenticate(request, context)
        let id = try await uploadSession(id, context, by: user)
        let commands = Set((request.headers[Self.uploadCommand] ?? "").lowercased().split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        })
        if commands == ["query"] {
            switch try await service.resumptionPoint(of: id, by: user) {
            case .active(let session): return Self.status("active", received: session.received)
            case .finished(let finished): return Self.status("final", received: finished.size)
            }
        }
        if commands == ["cancel"] {
            try await service.cancelUploadSession(id, by: user)
            return Self.status("cancelled", received: nil)
        }
        guard !commands.isEmpty, commands.isSubset(of: ["upload", "finalize"]) else {
            throw SpotError(.badRequest, "X-Goog-Upload-Command must be upload, 'upload, finalize', finalize, query or cancel")
        }
        guard let offsetText = request.headers[Self.uploadOffset], let offset = Int64(offsetText) else {
            throw SpotError(.badRequest, "an upload command needs X-Goog-Upload-Offset: the offset of its first byte")
        }
        try Self.refuseTransferCodings(request)  // for every command, `finalize` alone too
        do {
            var end: Int64? = offset
            if commands.contains("upload") {
                do {
                    let session = try await appendBody(of: request, context, to: id, at: offset, by: user)
                    guard commands.contains("finalize") else { return Self.status("active", received: session.received) }
                    end = session.received
                } catch let missing as SpotError where missing.kind == .notFound && commands.contains("finalize") {
                    end = nil  // sent again after its answer was lost: finishing answers the object stored
                }
            }
            let object = try await finishSession(id, at: end, by: user)
            var response = try await metadata(object, request, context)
            response.headers[Self.uploadStatus] = "final"
            return response
        } catch let mismatch as UploadOffsetMismatch {
            var response = Self.status("active", received: mismatch.expected)
            response.status = .conflict
            response.headers[.contentType] = "application/json"
            response.body = .init(byteBuffer: ByteBuffer(string: #"{"error":{"code":409,"message":"the upload is at offset \#(mismatch.expected); send the bytes from there"}}"#))
            return response
        }
    }

    /// An empty answer with `X-Goog-Upload-Status` and, when given, the bytes received.
    private static func status(_ status: String, received: Int64?) -> Response {
        var headers = HTTPFields()
        headers[uploadStatus] = status
        if let received { headers[sizeReceived] = String(received) }
        return Response(status: .ok, headers: headers)
    }
}

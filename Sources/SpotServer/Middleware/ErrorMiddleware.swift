import Foundation
import Hummingbird
import Logging
import NIOHTTP1
import SpotAPI
import SpotCore

/// Turns every error into `{"error":{"code":…,"message":…}}` with the right status — the
/// one place domain errors become HTTP. Refusals are counted in `metrics` by reason; errors
/// are logged with the context logger, so they carry the request id.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    var metrics: Metrics? = nil

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch is UploadGate.Draining {
            metrics?.recordRefusal("draining")
            var response = Self.response(
                status: .serviceUnavailable, message: "the server is shutting down and takes no new uploads; retry in a few seconds")
            response.headers[.retryAfter] = "5"
            return response
        } catch let error as SpotError {
            metrics?.recordRefusal(Metrics.reason(error.kind))
            if error.kind == .internal {
                context.logger.error("internal error", metadata: ["error": "\(error.message)", "path": "\(request.uri.path)"])
            }
            return Self.response(status: Self.status(of: error.kind), message: error.message)
        } catch let error as HTTPParserError {
            // Broken framing (a bad chunk size, a body cut short by the client): the client's fault.
            metrics?.recordRefusal("malformed")
            return Self.response(status: .badRequest, message: "the request is not valid HTTP: \(error.debugDescription)")
        } catch let error as HTTPError {
            return Self.response(status: error.status, message: error.body ?? error.status.reasonPhrase)
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return Self.response(status: .internalServerError, message: "internal error; the server log has details")
        }
    }

    static func status(of kind: SpotError.Kind) -> HTTPResponse.Status {
        HTTPResponse.Status(code: kind.httpStatusCode)
    }

    static func response(status: HTTPResponse.Status, message: String) -> Response {
        Response(status: status, headers: .json(status), body: .init(byteBuffer: ErrorBody.json(status: status, message: message)))
    }
}

extension ErrorBody {
    /// The JSON of an error answer with `status` and `message`.
    static func json(status: HTTPResponse.Status, message: String) -> ByteBuffer {
        let json = (try? APIJSON.encoder().encode(ErrorBody(code: status.code, message: message)))
            ?? Data(#"{"error":{"code":500,"message":"internal error"}}"#.utf8)
        return ByteBuffer(bytes: json)
    }
}

extension HTTPFields {
    /// The headers every JSON answer starts from: `Content-Type: application/json; charset=utf-8`.
    static var json: HTTPFields { [.contentType: "application/json; charset=utf-8"] }

    /// How long a client is told to wait before retrying a 503: a backend that went away
    /// is reconnected to on the next request once it is back.
    static let unavailableRetrySeconds = 2

    /// The headers of a JSON answer with `status`: `WWW-Authenticate` with 401, `Retry-After`
    /// with 429 and 503.
    static func json(_ status: HTTPResponse.Status) -> HTTPFields {
        var headers = HTTPFields.json
        switch status {
        case .unauthorized: headers[.wwwAuthenticate] = "Bearer"
        case .tooManyRequests: headers[.retryAfter] = String(FailedAuthenticationLimiter.windowSeconds)
        case .serviceUnavailable: headers[.retryAfter] = String(unavailableRetrySeconds)
        default: break
        }
        return headers
    }
}

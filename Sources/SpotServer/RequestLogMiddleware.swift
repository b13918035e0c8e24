import Foundation
import HTTPTypes
import Hummingbird
import Logging

extension HTTPField.Name {
    /// `X-Request-Id`: the id of a request in the logs, given by the client or made here.
    static let requestID = HTTPField.Name("X-Request-Id")!
}

/// The outermost middleware: gives each request an id (the client's `X-Request-Id` when it
/// is at most 64 characters of `[A-Za-z0-9._-]`, else a new one), echoes it in the
/// response, puts it in the context logger's `request_id` metadata (so every line logged
/// for the request carries it), logs one info line per request and records its metrics.
/// The duration runs until the response head; a streamed body may take longer.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: Metrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = Self.sanitizedID(request.headers[.requestID]) ?? Self.newID()
        var context = context
        context.logger[metadataKey: "request_id"] = .string(id)
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            // The error middleware answers every error; this is only a safety net.
            let status = (error as? HTTPResponseError)?.status ?? .internalServerError
            log(request, context, status: status, bytes: nil, started: started)
            throw error
        }
        response.headers[.requestID] = id
        log(request, context, status: response.status, bytes: response.body.contentLength, started: started)
        return response
    }

    private func log(_ request: Request, _ context: Context, status: HTTPResponse.Status, bytes: Int?, started: ContinuousClock.Instant) {
        let duration = ContinuousClock.now - started
        let route = context.endpointPath ?? "unmatched"
        metrics.recordRequest(method: request.method.rawValue, route: route, status: status.code, duration: duration)
        var metadata: Logger.Metadata = [
            "method": .string(request.method.rawValue), "route": .string(route), "status": .stringConvertible(status.code),
            "duration_ms": .string(Self.milliseconds(duration)),
        ]
        if let bytes { metadata["bytes_out"] = .stringConvertible(bytes) }
        if let length = request.headers[.contentLength] { metadata["bytes_in"] = .string(length) }
        context.logger.info("request", metadata: metadata)
    }

    /// `duration` in milliseconds with one decimal, like `12.3` (no `String(format:)`: it
    /// costs more than the rest of the line).
    static func milliseconds(_ duration: Duration) -> String {
        let tenths = Int((Metrics.seconds(duration) * 10_000).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// `header` when it is a sane id: 1 to 64 characters of `[A-Za-z0-9._-]`.
    static func sanitizedID(_ header: String?) -> String? {
        guard let header, (1...64).contains(header.utf8.count),
              header.utf8.allSatisfy({ byte in
                  (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                      || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                      || byte == UInt8(ascii: "-")
              })
        else { return nil }
        return header
    }

    /// 16 random hex digits.
    static func newID() -> String {
        let value = UInt64.random(in: .min ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

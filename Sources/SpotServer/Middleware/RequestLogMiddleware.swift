import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization

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
        let id = RequestLog.sanitizedID(request.headers[.requestID]) ?? RequestLog.newID()
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
        RequestLog(method: request.method, route: context.endpointPath ?? "unmatched", bytesIn: request.headers[.contentLength])
            .record(status: status, bytesOut: bytes, duration: ContinuousClock.now - started, logger: context.logger, metrics: metrics)
    }
}

/// One request as the log and the metrics see it; shared by `RequestLogMiddleware` and the
/// answers `KeptThumbnailHandler` gives without the router.
package struct RequestLog {
    var method: HTTPRequest.Method
    /// The route's pattern, like `/v0/b/{bucket}/o/**`.
    var route: String
    /// The request's Content-Length, when it has one.
    var bytesIn: String?

    /// Records the request's metrics and logs its info line, with `requestID` when the
    /// logger's metadata does not have it already.
    func record(status: HTTPResponse.Status, bytesOut: Int?, duration: Duration, requestID: String? = nil, logger: Logger, metrics: Metrics) {
        metrics.recordRequest(method: method.rawValue, route: route, status: status.code, duration: duration)
        var metadata: Logger.Metadata = [
            "method": .string(method.rawValue), "route": .string(route), "status": .stringConvertible(status.code),
            "duration_ms": .string(Self.milliseconds(duration)),
        ]
        if let requestID { metadata["request_id"] = .string(requestID) }
        if let bytesOut { metadata["bytes_out"] = .stringConvertible(bytesOut) }
        if let bytesIn { metadata["bytes_in"] = .string(bytesIn) }
        logger.info("request", metadata: metadata)
    }

    /// `duration` in milliseconds with one decimal, like `12.3` (no `String(format:)`: it
    /// costs more than the rest of the line).
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = Int(seconds) * 10_000 + Int((Double(attoseconds) / 1e14).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// `header` when it is a sane id: 1 to 64 characters of `[A-Za-z0-9._-]`.
    package static func sanitizedID(_ header: String?) -> String? {
        guard let header, (1...64).contains(header.utf8.count),
              header.utf8.allSatisfy({ byte in
                  (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                      || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                      || byte == UInt8(ascii: "-")
              })
        else { return nil }
        return header
    }

    /// 16 hex digits, never the same twice in a process: SplitMix64 of a counter from a
    /// random start (no system call per id, unlike `UInt64.random`).
    static func newID() -> String {
        var value = idStart &+ idCounter.add(1, ordering: .relaxed).newValue &* 0x9E37_79B9_7F4A_7C15
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        value ^= value >> 31
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    private static let idStart = UInt64.random(in: .min ... .max)
    private static let idCounter = Atomic<UInt64>(0)
}

import Hummingbird

/// CORS for browser apps: requests from a listed origin get `Access-Control-Allow-Origin`
/// for that origin (or `*` when listed), and preflight `OPTIONS` requests are answered here,
/// before routing. Other origins get no CORS headers, so browsers block them.
struct CORSOriginsMiddleware<Context: RequestContext>: RouterMiddleware {
    let origins: Set<String>

    /// What browser code may read of a response: the resumable-upload protocols live in headers.
    static var exposedHeaders: String {
        "ETag, Content-Range, Content-Length, Location, X-Goog-Upload-URL, X-Goog-Upload-Status, X-Goog-Upload-Size-Received, "
            + "X-Goog-Upload-Chunk-Granularity, Upload-Offset, Upload-Length, Upload-Expires, Upload-Complete, Upload-Limit, "
            + "Tus-Resumable, Tus-Version, Tus-Extension, Tus-Max-Size, Tus-Checksum-Algorithm"
    }

    init(origins: [String]) {
        self.origins = Set(origins)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin], origins.contains(origin) || origins.contains("*") else {
            return try await next(request, context)
        }
        let allowed = origins.contains("*") ? "*" : origin
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers = HTTPFields()
            headers[.accessControlAllowOrigin] = allowed
            headers[.accessControlAllowMethods] = "GET, HEAD, PUT, POST, PATCH, DELETE"
            // Firebase's SDKs and tus clients send headers of their own (X-Goog-Upload-*,
            // X-Firebase-*, Upload-*, Tus-Resumable): any header the browser asks about is allowed.
            headers[.accessControlAllowHeaders] = request.headers[.accessControlRequestHeaders] ?? "Authorization, Content-Type, Range, If-None-Match"
            headers[.accessControlMaxAge] = "3600"
            headers[.vary] = "Origin"
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = allowed
        response.headers[.accessControlExposeHeaders] = Self.exposedHeaders
        response.headers[.vary] = "Origin"
        return response
    }
}

import Hummingbird

/// CORS for browser apps: requests from a listed origin get `Access-Control-Allow-Origin`
/// for that origin (or `*` when listed), and preflight `OPTIONS` requests are answered here,
/// before routing. Other origins get no CORS headers, so browsers block them.
struct CORSOriginsMiddleware<Context: RequestContext>: RouterMiddleware {
    let origins: Set<String>

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
            headers[.accessControlAllowHeaders] = "Authorization, Content-Type, Range, If-None-Match"
            headers[.accessControlMaxAge] = "3600"
            headers[.vary] = "Origin"
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = allowed
        response.headers[.accessControlExposeHeaders] = "ETag, Content-Range, Content-Length"
        response.headers[.vary] = "Origin"
        return response
    }
}

import Hummingbird

/// `X-Content-Type-Options: nosniff` on every answer, errors included, so no browser reads
/// an object (or anything else) as a type other than the one it is served with.
struct NoSniffMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        return response
    }
}

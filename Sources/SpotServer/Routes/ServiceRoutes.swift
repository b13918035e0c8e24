import Foundation
import Hummingbird
import NIOCore
import SpotAPI
import SpotCore
import SpotService

/// What every group of handlers shares: the service, authentication, parameters, JSON.
protocol ServiceRoutes: Sendable {
    var service: StorageService { get }
    var limiter: FailedAuthenticationLimiter { get }
    var addressing: ClientAddressing { get }
}

extension ServiceRoutes {
    /// The user of the bearer token, or, without an Authorization header, of the console
    /// session cookie (`ConsoleSession`); `nil` without either (the rules decide what
    /// anonymous requests may do). `.unauthenticated` for a token that is not valid or a
    /// session that ended, `.rateLimited` after too many failed tokens from the client's
    /// address, `.forbidden` for a cookie on a change without the console's header.
    func authenticate(_ request: Request, _ context: SpotRequestContext) async throws -> User? {
        if request.headers[.authorization] == nil, let secret = try ConsoleSession.secret(of: request) {
            return try await service.user(session: secret)
        }
        return try await withFailuresCounted(request, context) {
            try await service.authenticate(token: try bearerToken(request))
        }
    }

    /// Runs `check` (a sign-in or a download token) unless the client's address failed too
    /// often lately; an `.unauthenticated` or `.forbidden` answer counts as a failure.
    func withFailuresCounted<Value>(
        _ request: Request, _ context: SpotRequestContext, _ check: () async throws -> Value
    ) async throws -> Value {
        let client = addressing.clientAddress(connection: context.clientAddress, headers: request.headers)
        try limiter.check(client)
        do {
            return try await check()
        } catch let error as SpotError where error.kind == .unauthenticated || error.kind == .forbidden {
            limiter.recordFailure(client)
            throw error
        }
    }

    /// The token of an `Authorization: Bearer <token>` header, or of `Firebase <token>` as
    /// Firebase's SDKs send it.
    func bearerToken(_ request: Request) throws(SpotError) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        // The scheme is case-insensitive; compared by bytes, without lowercasing the token.
        func hasScheme(_ scheme: String) -> Bool {
            header.utf8.count >= scheme.utf8.count && zip(header.utf8, scheme.utf8).allSatisfy { $0 | 0x20 == $1 }
        }
        guard let scheme = ["bearer ", "firebase "].first(where: hasScheme) else {
            throw SpotError(.unauthenticated, "the Authorization header must be 'Bearer <token>' (or 'Firebase <ID token>')")
        }
        // Trimmed of HTTP's optional whitespace (spaces and tabs), by bytes.
        let token = header.utf8.dropFirst(scheme.utf8.count).drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let end = token.lastIndex { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        return end.map { String(Substring(token[...$0])) } ?? ""
    }

    /// The request's JSON body of at most `limit` bytes as `type`; `.badRequest` showing
    /// `example` when it is not that JSON, `.tooLarge` when it is longer.
    func decodeBody<Body: Decodable>(_ type: Body.Type, of request: Request, upTo limit: Int, example: String) async throws -> Body {
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw SpotError(.tooLarge, "the body is over \(limit / 1024) KiB; it must be JSON like \(example)")
        }
        do {
            return try JSONDecoder().decode(type, from: Data(buffer: body))
        } catch {
            throw SpotError(.badRequest, "the body must be JSON like \(example)")
        }
    }

    /// The route parameter `name`, percent-decoded; `.badRequest` naming it as `what` when
    /// it is not valid percent-encoded UTF-8.
    func decodedParameter(_ name: String, as what: String, _ context: SpotRequestContext) throws -> String {
        guard let value = context.parameters.get(name).flatMap({ PercentDecoding.decode($0[...]) }) else {
            throw SpotError(.badRequest, "the \(what) in the URL is not valid percent-encoded UTF-8")
        }
        return value
    }

    /// The `:bucket` parameter, validated.
    func bucket(_ context: SpotRequestContext) throws -> String {
        let bucket = context.parameters.get("bucket") ?? ""
        try ObjectPath.validate(bucket: bucket)
        return bucket
    }

    /// `id`, once it names an upload session (active or finished) into the URL's bucket that
    /// `user` may go on with.
    /// - Throws: `.notFound` for a session of another bucket; as `StorageService.uploadSession(_:by:)`.
    func uploadSession(_ id: String, _ context: SpotRequestContext, by user: User?) async throws -> String {
        guard try await service.uploadTarget(of: id, by: user).bucket == bucket(context) else {
            throw SpotError(.notFound, "there is no such upload in bucket \(try bucket(context))")
        }
        return id
    }

    /// `scheme://host[:port]` as the client reaches the server, for absolute URLs (see `ClientAddressing`).
    func baseURL(_ request: Request, _ context: SpotRequestContext) -> String {
        addressing.baseURL(connection: context.clientAddress, authority: request.head.authority, headers: request.headers)
    }

    /// A 200 JSON response with sorted keys and ISO 8601 dates.
    func json(_ value: some Encodable) throws -> Response {
        Response(status: .ok, headers: .json, body: .init(byteBuffer: ByteBuffer(bytes: try APIJSON.encoder().encode(value))))
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import SpotAPI
import SpotCore
import SpotService

/// The console's session cookie: `spotstore_session`, HttpOnly (no script reads it),
/// SameSite=Strict (no other site's page sends it), Secure when the client reaches the
/// server over https, for the whole origin.
///
/// Another page of the same site (another port of the same host) could still make the
/// browser send it; so the cookie signs in a request that changes something only when the
/// request carries `X-SpotStore-Console: 1`, a header that no form sets and that a script
/// of another origin can send only after a CORS preflight, which the server never allows
/// with credentials.
enum ConsoleSession {
    static let cookieName = "spotstore_session"
    static let header = HTTPField.Name("X-SpotStore-Console")!

    /// The session secret the request's cookie holds, `nil` without one.
    /// - Throws: `.forbidden` for a cookie on a request other than `GET` or `HEAD` without `header`.
    static func secret(of request: Request) throws(SpotError) -> String? {
        guard let secret = request.cookies[cookieName]?.value, !secret.isEmpty else { return nil }
        guard request.method == .get || request.method == .head || request.headers[header] == "1" else {
            throw SpotError(.forbidden, "a console session signs in a change only with the header X-SpotStore-Console: 1 (it keeps other sites from using the session)")
        }
        return secret
    }

    /// The `Set-Cookie` value that holds `session` (or, with `nil`, removes the cookie).
    static func cookie(_ session: BrowserSession?, secure: Bool, now: Date) -> Cookie {
        let lifetime = session.map { max(0, Int($0.expiresAt.timeIntervalSince(now))) } ?? 0
        return Cookie(
            name: cookieName, value: session?.secret ?? "", maxAge: lifetime, path: "/", secure: secure, httpOnly: true, sameSite: .strict)
    }
}

/// `/v0/session`: signing in to the console (a cookie), who is signed in, signing out.
struct SessionRoutes: ServiceRoutes {
    let service: StorageService
    let limiter: FailedAuthenticationLimiter
    let addressing: ClientAddressing

    /// `POST /v0/session` with `X-SpotStore-Console: 1` and either an Authorization header
    /// (a SpotStore token or an ID token) or `{"link": "ssl_…"}` (a one-time sign-in link):
    /// starts a session, sets its cookie, and answers `SessionResource`.
    @Sendable func create(_ request: Request, context: SpotRequestContext) async throws -> Response {
        guard request.headers[ConsoleSession.header] == "1" else {
            throw SpotError(.forbidden, "signing in to the console needs the header X-SpotStore-Console: 1")
        }
        let user: User, session: BrowserSession
        if request.headers[.authorization] != nil {
            guard let signedIn = try await withFailuresCounted(request, context, { try await service.authenticate(token: try bearerToken(request)) }) else {
                throw SpotError(.unauthenticated, "send a token: Authorization: Bearer <token>")
            }
            (user, session) = (signedIn, try await service.startSession(for: signedIn))
        } else {
            let body = try await decodeBody(SignInLinkBody.self, of: request, upTo: 4096, example: #"{"link": "ssl_…"}"#)
            (user, session) = try await withFailuresCounted(request, context) { try await service.signIn(link: body.link) }
        }
        var response = try json(SessionResource(user: user, expiresAt: session.expiresAt))
        response.setCookie(ConsoleSession.cookie(session, secure: isSecure(request, context), now: service.configuration.now()))
        return response
    }

    /// `GET /v0/session`: the user of the session cookie (or token); `{}` (no user) without
    /// either, 401 for a session that ended.
    @Sendable func get(_ request: Request, context: SpotRequestContext) async throws -> Response {
        try json(SessionResource(user: try await authenticate(request, context), expiresAt: nil))
    }

    /// `DELETE /v0/session` with `X-SpotStore-Console: 1`: ends the cookie's session on every
    /// server of the store and removes the cookie; 204 also when it had ended.
    @Sendable func delete(_ request: Request, context: SpotRequestContext) async throws -> Response {
        guard request.headers[ConsoleSession.header] == "1" else {
            throw SpotError(.forbidden, "signing out of the console needs the header X-SpotStore-Console: 1")
        }
        if let secret = try ConsoleSession.secret(of: request) { try await service.endSession(secret) }
        var response = Response(status: .noContent)
        response.setCookie(ConsoleSession.cookie(nil, secure: isSecure(request, context), now: service.configuration.now()))
        return response
    }

    private func isSecure(_ request: Request, _ context: SpotRequestContext) -> Bool {
        baseURL(request, context).hasPrefix("https:")
    }
}

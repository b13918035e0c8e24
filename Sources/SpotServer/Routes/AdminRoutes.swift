import Foundation
import Hummingbird
import Logging
import SpotAPI
import SpotCore
import SpotService

/// The admin API for app backends, `/v0/admin/users…`: every route needs a token of a user
/// holding the admin role (401 without a token, 403 without the role), and every action is
/// logged with the acting uid.
struct AdminRoutes: ServiceRoutes {
    let service: StorageService
    let limiter: FailedAuthenticationLimiter
    let addressing: ClientAddressing

    /// Users listed per page at most.
    static let maxPageSize = 1000

    /// `POST /v0/admin/users` with `{"uid", "claims"}`: 201 `{user, token}`, the token shown once.
    @Sendable func create(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let admin = try await self.admin(request, context)
        let body = try await decodeBody(NewUserBody.self, of: request, upTo: 64 * 1024, example: #"{"uid": "alice", "claims": {"team": "blue"}}"#)
        let (user, token) = try await service.addUser(body.uid, claims: body.claims ?? [:])
        log(admin, "create user", user.uid, context)
        var response = try json(CreatedUserResource(user: UserResource(user), token: token))
        response.status = .created
        return response
    }

    /// `GET /v0/admin/users?pageToken=&maxResults=`: `{users, nextPageToken}` by uid.
    @Sendable func list(_ request: Request, context: SpotRequestContext) async throws -> Response {
        _ = try await admin(request, context)
        let parameters = request.uri.queryParameters
        var limit = Self.maxPageSize
        if let text = parameters.get("maxResults") {
            guard let value = Int(text), (1...Self.maxPageSize).contains(value) else {
                throw SpotError(.badRequest, "maxResults must be a number from 1 to \(Self.maxPageSize)")
            }
            limit = value
        }
        let users = try await service.users(after: parameters.get("pageToken"), limit: limit + 1)
        let page = users.prefix(limit)
        return try json(UserPageResource(users: page.map(UserResource.init), nextPageToken: users.count > limit ? page.last?.uid : nil))
    }

    /// `GET /v0/admin/stats`: the store's statistics, as `spotstore stats --json` prints them
    /// (it walks every blob: a moment for a large store).
    @Sendable func stats(_ request: Request, context: SpotRequestContext) async throws -> Response {
        _ = try await admin(request, context)
        return try json(try await service.statistics())
    }

    /// `GET /v0/admin/rules`: `{text}`, the rules in force.
    @Sendable func rules(_ request: Request, context: SpotRequestContext) async throws -> Response {
        _ = try await admin(request, context)
        guard let text = service.policy.rulesText else { throw SpotError(.notFound, "this server decides without a rules file") }
        return try json(RulesTextResource(text: text))
    }

    /// `POST /v0/admin/rules/decide` with `RulesTrialBody`: how the rules in force decide that
    /// request (`RulesTrial`), without doing it.
    @Sendable func decide(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let admin = try await self.admin(request, context)
        let body = try await decodeBody(
            RulesTrialBody.self, of: request, upTo: 64 * 1024, example: #"{"uid": "alice", "operation": "write", "path": "spots/eiffel/1.jpg", "size": 7000000}"#)
        let slash = body.path.firstIndex(of: "/") ?? body.path.endIndex
        let trial = RulesTrial(
            uid: body.uid, claims: body.claims, operation: body.operation, bucket: String(body.path[..<slash]),
            name: String(body.path[slash...].dropFirst()), size: body.size, contentType: body.contentType, spotOwner: body.spotOwner,
            spotObjects: body.spotObjects)
        let outcome = try await service.decide(trial, by: admin)
        return try json(RulesDecisionResource(
            operation: outcome.operation.rawValue, allowed: outcome.allowed, rule: outcome.rule, explanation: outcome.explanation, limits: outcome.limits))
    }

    /// `GET /v0/admin/users/{uid}`.
    @Sendable func get(_ request: Request, context: SpotRequestContext) async throws -> Response {
        _ = try await admin(request, context)
        return try json(UserResource(try await service.user(try uid(context))))
    }

    /// `PATCH /v0/admin/users/{uid}/claims` with `{"claims": {"key": "value" or null}}`: the user.
    @Sendable func updateClaims(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let admin = try await self.admin(request, context)
        let uid = try uid(context)
        let body = try await decodeBody(ClaimChangesBody.self, of: request, upTo: 64 * 1024, example: #"{"claims": {"team": "blue", "old": null}}"#)
        let user = try await service.updateClaims(of: uid, body.claims)
        log(admin, "update claims", uid, context, ["claims": "\(body.claims.keys.sorted().joined(separator: ","))"])
        return try json(UserResource(user))
    }

    /// `POST /v0/admin/users/{uid}/tokens`: `{uid, token}`, the new token shown once.
    @Sendable func issueToken(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let admin = try await self.admin(request, context)
        let uid = try uid(context)
        let token = try await service.issueToken(for: uid)
        log(admin, "issue token", uid, context)
        return try json(IssuedTokenResource(uid: uid, token: token))
    }

    /// `DELETE /v0/admin/users/{uid}/tokens[?downloadTokens=replace]`: 204; every token of
    /// the user (and ID tokens issued before now) and every link the user made stop working
    /// on every server; with `downloadTokens=replace`, the download tokens on the user's
    /// objects are replaced too (`StorageService.replaceDownloadTokens(of:)`).
    @Sendable func revokeTokens(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let admin = try await self.admin(request, context)
        let uid = try uid(context)
        let replaces: Bool
        switch request.uri.queryParameters.get("downloadTokens") {
        case nil: replaces = false
        case "replace": replaces = true
        case let other?: throw SpotError(.badRequest, "downloadTokens=\(other) is not known: give downloadTokens=replace, or nothing")
        }
        let replaced = try await service.revokeTokens(of: uid, replacingDownloadTokens: replaces)
        log(admin, "revoke tokens", uid, context)
        if let replaced { log(admin, "replace download tokens", uid, context, ["objects": "\(replaced)"]) }
        return Response(status: .noContent)
    }

    /// `DELETE /v0/admin/users/{uid}`: 204; the user's objects stay.
    @Sendable func delete(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let admin = try await self.admin(request, context)
        let uid = try uid(context)
        try await service.deleteUser(uid)
        log(admin, "delete user", uid, context)
        return Response(status: .noContent)
    }

    private func admin(_ request: Request, _ context: SpotRequestContext) async throws -> User {
        try StorageService.admin(try await authenticate(request, context))
    }

    private func uid(_ context: SpotRequestContext) throws -> String {
        try decodedParameter("uid", as: "uid", context)
    }

    private func log(_ admin: User, _ action: String, _ uid: String, _ context: SpotRequestContext, _ extra: Logger.Metadata = [:]) {
        context.logger.notice("admin action", metadata: ["by": "\(admin.uid)", "action": "\(action)", "uid": "\(uid)"].merging(extra) { $1 })
    }
}

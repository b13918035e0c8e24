import Foundation
import SpotCore

/// A user as the admin API shows it: `{uid, createdAt, tokenCount, claims, admin,
/// provider, lastSignInAt, revokedAt}` (the last three absent when unknown).
public struct UserResource: Codable, Sendable, Equatable {
    public let uid: String
    public let createdAt: Date
    public let tokenCount: Int
    public let claims: [String: String]
    public let admin: Bool
    public let provider: String?
    public let lastSignInAt: Date?
    public let revokedAt: Date?

    public init(_ user: User) {
        uid = user.uid
        createdAt = user.createdAt
        tokenCount = user.tokenCount
        claims = user.claims
        admin = user.isAdmin
        provider = user.provider
        lastSignInAt = user.lastSignInAt
        revokedAt = user.revokedAt
    }
}

/// One page of users: `{users, nextPageToken}`.
public struct UserPageResource: Codable, Sendable {
    public let users: [UserResource]
    public let nextPageToken: String?

    public init(users: [UserResource], nextPageToken: String?) {
        self.users = users
        self.nextPageToken = nextPageToken
    }
}

/// A token made by the admin API, shown once: `{uid, token}`.
public struct IssuedTokenResource: Codable, Sendable {
    public let uid: String
    public let token: String

    public init(uid: String, token: String) {
        self.uid = uid
        self.token = token
    }
}

/// `POST /v0/admin/users`: `{"uid": "…", "claims": {"team": "blue"}}` (claims optional).
public struct NewUserBody: Codable, Sendable {
    public let uid: String
    public let claims: [String: String]?

    public init(uid: String, claims: [String: String]? = nil) {
        self.uid = uid
        self.claims = claims
    }
}

/// `PATCH /v0/admin/users/{uid}/claims`: `{"claims": {"team": "blue", "old": null}}`
/// (`null` removes a claim).
public struct ClaimChangesBody: Codable, Sendable {
    public let claims: [String: String?]

    public init(claims: [String: String?]) {
        self.claims = claims
    }
}

/// A user made by the admin API, with its first token, shown once: `{user, token}`.
public struct CreatedUserResource: Codable, Sendable {
    public let user: UserResource
    public let token: String

    public init(user: UserResource, token: String) {
        self.user = user
        self.token = token
    }
}

/// `POST /v0/admin/rules/decide`: a request to decide with the rules in force, without doing it:
/// `{"uid", "claims", "operation", "path", "size", "contentType", "spotOwner", "spotObjects"}`
/// (`uid` absent for a request without a token; `path` is `bucket/name`, for `list` `bucket/prefix`).
public struct RulesTrialBody: Codable, Sendable {
    public let uid: String?
    public let claims: [String: String]?
    public let operation: String
    public let path: String
    public let size: Int64?
    public let contentType: String?
    public let spotOwner: String?
    public let spotObjects: Int?
}

/// How the rules decided a trial: `{operation, allowed, rule, explanation, limits}`.
public struct RulesDecisionResource: Codable, Sendable {
    public let operation: String
    public let allowed: Bool
    /// The rule that allowed it, as `FILE:LINE:COLUMN: allow …`.
    public let rule: String?
    public let explanation: String
    /// The limits that apply to an upload there.
    public let limits: String?

    public init(operation: String, allowed: Bool, rule: String?, explanation: String, limits: String?) {
        self.operation = operation
        self.allowed = allowed
        self.rule = rule
        self.explanation = explanation
        self.limits = limits
    }
}

/// The rules in force: `{text}`.
public struct RulesTextResource: Codable, Sendable {
    public let text: String

    public init(text: String) {
        self.text = text
    }
}

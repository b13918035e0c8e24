import Foundation
import SpotCore

/// What a request wants to do, as Firebase Storage rules name it. `read` covers `get` and
/// `list`; `write` covers `create`, `update` and `delete`.
public enum Operation: String, Sendable, CaseIterable {
    /// Read an object's metadata, bytes or thumbnails.
    case get
    /// List names under a prefix (`name` is the prefix); also spot search.
    case list
    /// Store an object where none is.
    case create
    /// Replace an existing object.
    case update
    /// Delete an object.
    case delete
}

/// Who is asking: the signed-in user, the claims of their ID token and of their user record.
public struct Auth: Sendable, Equatable, Codable {
    public var uid: String
    /// `request.auth.token.<claim>` from the user record, over `tokenClaims`; values are
    /// text as stored (`"true"`, `"42"`, `"paris"`) and the rules read `true`/`false` as
    /// booleans and integers as numbers.
    public var claims: [String: String]
    /// `request.auth.token.<claim>` as the ID token the request signed in with has them
    /// (`email`, `email_verified`, `firebase.sign_in_provider`, custom claims).
    public var tokenClaims: [String: ClaimValue]

    public init(uid: String, claims: [String: String] = [:], tokenClaims: [String: ClaimValue] = [:]) {
        self.uid = uid
        self.claims = claims
        self.tokenClaims = tokenClaims
    }
}

/// The object a `create` or `update` would store (`request.resource`).
public struct IncomingObject: Sendable, Equatable {
    /// Bytes: the declared Content-Length before the body is read, the real size after.
    public var size: Int64
    /// The client's claim before the body is read; after it, what the bytes are.
    public var contentType: String
    /// The custom metadata the object would have (`request.resource.metadata`).
    public var metadata: [String: String]

    public init(size: Int64, contentType: String, metadata: [String: String] = [:]) {
        self.size = size
        self.contentType = contentType
        self.metadata = metadata
    }
}

/// Everything a policy may look at to decide.
public struct AccessRequest: Sendable, Equatable {
    /// `request.auth`: `nil` when the request carries no token.
    public var auth: Auth?
    public var operation: Operation
    public var bucket: String
    /// The object name; for `.list`, the prefix (may be empty).
    public var name: String
    /// The spot the object is in (folder directly under the bucket), when it exists;
    /// `objects` counts uploads in flight to it too.
    public var spot: SpotState?
    /// `resource`: the object already at `name`, if any.
    public var resource: StoredObject?
    /// `request.resource`: for `create` and `update` only.
    public var incoming: IncomingObject?
    /// `request.time`.
    public var time: Date

    public init(
        auth: Auth?, operation: Operation, bucket: String, name: String, spot: SpotState? = nil,
        resource: StoredObject? = nil, incoming: IncomingObject? = nil, time: Date = Date()
    ) {
        self.auth = auth
        self.operation = operation
        self.bucket = bucket
        self.name = name
        self.spot = spot
        self.resource = resource
        self.incoming = incoming
        self.time = time
    }
}

/// Limits an allowed write must respect; the upload coordinator enforces them before
/// and while the body is read, and the catalog re-checks the spot count on commit.
public struct UploadLimits: Sendable, Equatable, Codable {
    /// What applies where no `limit` statement says otherwise: 6 MiB, any count, any type,
    /// thumbnails and a download token.
    public static let unspecified = UploadLimits(maxBytes: 6 * 1024 * 1024)

    /// The most bytes one object may have.
    public var maxBytes: Int64
    /// The most objects a spot (top folder) may hold; `nil` for no limit.
    public var maxObjectsPerSpot: Int?
    /// Accepted content types, judged by the bytes; `nil` accepts any.
    public var allowedContentTypes: Set<String>?
    /// Whether images get thumbnails (and must therefore decode).
    public var makesThumbnails: Bool
    /// Whether a new object gets a download token that readers see in its metadata (Firebase's
    /// `downloadTokens`, what `getDownloadURL()` reads).
    public var makesDownloadToken: Bool

    public init(
        maxBytes: Int64, maxObjectsPerSpot: Int? = nil, allowedContentTypes: Set<String>? = nil, makesThumbnails: Bool = true,
        makesDownloadToken: Bool = true
    ) {
        self.makesDownloadToken = makesDownloadToken
        self.maxBytes = maxBytes
        self.maxObjectsPerSpot = maxObjectsPerSpot
        self.allowedContentTypes = allowedContentTypes
        self.makesThumbnails = makesThumbnails
    }
}

extension UploadLimits {
    /// Why these limits refuse a write before its body is read: a declared size over
    /// `maxBytes` (`.tooLarge`), or a new object in a spot already holding
    /// `maxObjectsPerSpot` (`.conflict`); `nil` when neither.
    public func refusalBeforeBody(declaredSize: Int64?, spot: SpotState?, isNewObject: Bool) -> SpotError? {
        if let declaredSize, declaredSize > maxBytes {
            return SpotError(.tooLarge, "the upload is \(declaredSize) bytes; the limit for this path is \(Self.describe(bytes: maxBytes))")
        }
        if let limit = maxObjectsPerSpot, isNewObject, let spot, spot.objectCount >= limit {
            return SpotError(.conflict, "spot '\(spot.id)' already holds \(spot.objectCount) objects (counting uploads in progress); the limit is \(limit) per spot")
        }
        return nil
    }

    /// Why these limits refuse content of `contentType` (judged by the bytes):
    /// `.unsupportedMediaType` when it is not allowed; `nil` when it is.
    public func refusal(ofContentType contentType: String) -> SpotError? {
        guard let allowed = allowedContentTypes, !allowed.contains(contentType) else { return nil }
        return SpotError(.unsupportedMediaType, "this path accepts only \(allowed.sorted().joined(separator: ", ")); the bytes are \(contentType)")
    }

    /// `6 MiB`, `512 KiB`, `100 bytes`: a size in the largest binary unit it is a whole number of.
    public static func describe(bytes: Int64) -> String {
        for (unit, size) in [("GiB", Int64(1) << 30), ("MiB", Int64(1) << 20), ("KiB", Int64(1) << 10)] where bytes >= size && bytes % size == 0 {
            return "\(bytes / size) \(unit)"
        }
        return "\(bytes) bytes"
    }
}

/// A policy's answer, with what decided it so a person can see why.
public struct Decision: Sendable, Equatable {
    public var allowed: Bool
    /// The rule that allowed, as `FILE:LINE:COLUMN: allow …`; `nil` when denied.
    public var rule: String?
    /// Why, in a sentence a person can act on (for a denial: what was asked, and that no rule allowed it).
    public var explanation: String
    /// The limits that apply to the path (meaningful for `create` and `update`).
    public var limits: UploadLimits

    public init(allowed: Bool, rule: String?, explanation: String, limits: UploadLimits) {
        self.allowed = allowed
        self.rule = rule
        self.explanation = explanation
        self.limits = limits
    }
}

/// Decides every request: deny unless a rule allows. Deciding never throws: an error while
/// evaluating a condition (a missing field, a type mismatch) makes that condition false.
public protocol AccessPolicy: Sendable {
    func decide(_ request: AccessRequest) -> Decision

    /// The rules' text, as the console's administration shows it; `nil` for a policy without one.
    var rulesText: String? { get }
}

extension AccessPolicy {
    public var rulesText: String? { nil }
}

/// Names the decisions of the rules in force, for what a server keeps of them (not part of
/// `AccessPolicy`: only a server that keeps answers asks).
public protocol RulesRevision: Sendable {
    /// While it stays the same, a request is decided the same way whenever it is asked
    /// (given the same catalog); `nil` when decisions depend on the time of the request,
    /// so no answer may be reused.
    var revision: Int? { get }
}

extension AccessPolicy {
    /// The limits of an allowed request; throws `.forbidden` (or `.unauthenticated` when
    /// the request had no token) with the decision's explanation.
    public func authorize(_ request: AccessRequest) throws(SpotError) -> UploadLimits {
        let decision = decide(request)
        guard decision.allowed else {
            if request.auth == nil {
                throw SpotError(.unauthenticated, "\(decision.explanation); sign in: send 'Authorization: Bearer <token>'")
            }
            throw SpotError(.forbidden, decision.explanation)
        }
        return decision.limits
    }
}

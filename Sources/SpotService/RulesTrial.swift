import Access
import Foundation
import SpotCore

/// One request decided with the rules as the server would, without doing it: the rules
/// playground of the console (`POST /v0/admin/rules/decide`) and `spotstore rules test`.
/// The user's claims, the spot and any existing object come from the store, unless the
/// trial gives them.
public struct RulesTrial: Sendable {
    /// The operations a trial names: `read` and `write` pick `get`, and `create` or `update` by whether the object exists.
    public static let operations = ["read", "get", "list", "write", "create", "update", "delete"]

    /// The signed-in user; `nil` for a request without a token.
    public var uid: String?
    /// The user's claims, replacing the stored ones when given.
    public var claims: [String: String]?
    /// One of `operations`.
    public var operation: String
    public var bucket: String
    /// The object's name (for `list`: the prefix).
    public var name: String
    /// The upload's size and content type (`create` and `update`).
    public var size: Int64?
    public var contentType: String?
    /// The spot's owner and object count, replacing the stored ones when given (the spot then exists).
    public var spotOwner: String?
    public var spotObjects: Int?

    public init(
        uid: String?, claims: [String: String]? = nil, operation: String, bucket: String, name: String, size: Int64? = nil,
        contentType: String? = nil, spotOwner: String? = nil, spotObjects: Int? = nil
    ) {
        self.uid = uid
        self.claims = claims
        self.operation = operation
        self.bucket = bucket
        self.name = name
        self.size = size
        self.contentType = contentType
        self.spotOwner = spotOwner
        self.spotObjects = spotObjects
    }

    /// What the store holds about a trial's request: the user's claims, the spot, the object.
    public struct Facts: Sendable {
        public var claims: [String: String] = [:]
        public var spot: SpotState?
        public var resource: StoredObject?

        public init(claims: [String: String] = [:], spot: SpotState? = nil, resource: StoredObject? = nil) {
            self.claims = claims
            self.spot = spot
            self.resource = resource
        }
    }

    /// How a trial went: the operation decided, allowed or not, the rule that allowed it (or
    /// why not), the limits' refusal of an allowed upload, and the limits that apply.
    public struct Outcome: Sendable {
        public var operation: Access.Operation
        public var allowed: Bool
        public var rule: String?
        public var explanation: String
        public var limits: String?
    }

    /// Checks what the server would answer 400 to before asking any rule.
    /// - Throws: `.badRequest` for an unknown operation, a bad uid, spot owner, bucket, name
    ///   or claim, or a negative size or object count.
    public func validate() throws {
        guard Self.operations.contains(operation) else {
            throw SpotError(.badRequest, "the operation must be one of \(Self.operations.joined(separator: ", "))")
        }
        if let uid { try User.validate(uid: uid) }
        if operation == "list" { try ObjectPath.validate(bucket: bucket) } else { _ = try ObjectPath(bucket: bucket, name: name) }
        for (key, value) in claims ?? [:] { try User.validate(claim: key, value: value) }
        if let spotOwner { try User.validate(uid: spotOwner) }
        guard (size ?? 0) >= 0, (spotObjects ?? 0) >= 0 else {
            throw SpotError(.badRequest, "size and spotObjects must be 0 or more")
        }
    }

    /// Decides the trial with `policy`, given what the store holds.
    public func decide(with policy: any AccessPolicy, facts: Facts) -> Outcome {
        var auth = uid.map { Auth(uid: $0, claims: facts.claims) }
        if let claims { auth?.claims = claims }
        var spot = facts.spot
        if let slash = name.firstIndex(of: "/"), spotOwner != nil || spotObjects != nil {
            spot = SpotState(
                bucket: bucket, id: String(name[..<slash]), owner: spotOwner ?? spot?.owner ?? uid ?? "",
                objectCount: spotObjects ?? spot?.objectCount ?? 0)
        }
        let exists = facts.resource != nil
        let operation: Access.Operation = switch self.operation {
        case "read": .get
        case "write": exists ? .update : .create
        default: Access.Operation(rawValue: self.operation) ?? .get
        }
        let writes = operation == .create || operation == .update
        let decision = policy.decide(AccessRequest(
            auth: auth, operation: operation, bucket: bucket, name: name, spot: spot, resource: facts.resource,
            incoming: writes ? IncomingObject(size: size ?? 0, contentType: contentType ?? "application/octet-stream") : nil))
        let limits = writes ? Self.describe(decision.limits) : nil
        if writes, decision.allowed,
           let refusal = decision.limits.refusalBeforeBody(declaredSize: size, spot: spot, isNewObject: operation == .create)
            ?? contentType.flatMap(decision.limits.refusal(ofContentType:)) {
            return Outcome(
                operation: operation, allowed: false, rule: decision.rule,
                explanation: "\(refusal.message) (\(decision.rule ?? "a rule") allowed it, but the limits refuse it)", limits: limits)
        }
        return Outcome(operation: operation, allowed: decision.allowed, rule: decision.rule, explanation: decision.explanation, limits: limits)
    }

    /// The limits as a person reads them: `size 6 MiB, objects 4 per spot, types …, thumbnails on`.
    static func describe(_ limits: UploadLimits) -> String {
        var parts = ["size \(UploadLimits.describe(bytes: limits.maxBytes))"]
        if let objects = limits.maxObjectsPerSpot { parts.append("objects \(objects) per spot") }
        if let types = limits.allowedContentTypes { parts.append("types \(types.sorted().joined(separator: ", "))") }
        parts.append("thumbnails \(limits.makesThumbnails ? "on" : "off")")
        if !limits.makesDownloadToken { parts.append("download tokens off") }
        return parts.joined(separator: ", ")
    }
}

extension StorageService {
    /// What the store holds about `trial`'s request: the user's claims, the spot, the object.
    public func facts(for trial: RulesTrial) async throws -> RulesTrial.Facts {
        var facts = RulesTrial.Facts()
        if let uid = trial.uid { facts.claims = try await catalog.user(uid: uid)?.claims ?? [:] }
        guard let path = try? ObjectPath(bucket: trial.bucket, name: trial.name) else { return facts }
        if let spotID = path.topFolder { facts.spot = try await catalog.spot(bucket: trial.bucket, id: spotID) }
        facts.resource = try await catalog.object(at: path)
        return facts
    }

    /// `trial` decided with the rules in force, for an admin.
    /// - Throws: as `admin(_:)` and `RulesTrial.validate()`.
    public func decide(_ trial: RulesTrial, by user: User?) async throws -> RulesTrial.Outcome {
        _ = try Self.admin(user)
        try trial.validate()
        return trial.decide(with: policy, facts: try await facts(for: trial))
    }
}

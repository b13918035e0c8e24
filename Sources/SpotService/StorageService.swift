import Access
import Foundation
import Media
import SpotCore

/// The use cases of SpotStore over its ports: authenticate, upload, read, list, delete,
/// manage users. Every request is authorised by the `AccessPolicy` first.
public struct StorageService: Sendable {
    public let catalog: any Catalog
    public let blobs: any BlobStore
    public let policy: any AccessPolicy
    /// Names the place of each photo's GPS position; `nil` leaves photos without places.
    public let geocoder: (any ReverseGeocoder)?
    public let configuration: ServiceConfiguration
    /// Told how long image analysis takes; `nil` (the default) tells no one.
    public var observer: (any ServiceObserver)?
    /// Verifies ID tokens (Firebase Auth, OpenID Connect); `nil` (the default) accepts
    /// SpotStore's own tokens only.
    public var identities: (any IdentityVerifier)?
    let writer: BlobWriter
    let analyzer: PhotoAnalyzer
    let coordinator = UploadCoordinator()
    let imageWork: OffPoolRunner

    /// Creates the temporary directory if needed.
    public init(
        catalog: any Catalog, blobs: any BlobStore, policy: any AccessPolicy, geocoder: (any ReverseGeocoder)? = nil,
        configuration: ServiceConfiguration
    ) throws {
        self.catalog = catalog
        self.blobs = blobs
        self.policy = policy
        self.geocoder = geocoder
        self.configuration = configuration
        self.writer = try BlobWriter(temporaryDirectory: configuration.temporaryDirectory)
        self.analyzer = PhotoAnalyzer(thumbnailSizes: configuration.thumbnailSizes, makesWebP: true, maxPixels: configuration.maxPixels)
        self.imageWork = OffPoolRunner(width: configuration.imageWorkers)
    }

    /// Empties this process's temp directory: uploads and blob writes a crash of an
    /// earlier process with the same directory cut short (call once at start, before
    /// serving). Other processes' directories are never touched. Returns how many files
    /// were removed.
    @discardableResult
    public func sweepTemporaryFiles() throws -> Int {
        try FileManager.default.removeContents(ofDirectory: configuration.temporaryDirectory)
    }

    // MARK: Users

    /// The user holding `token` (one of SpotStore's own, or an ID token when `identities`
    /// is set), or `nil` (anonymous) when there is no token: the rules decide what
    /// anonymous requests may do.
    /// - Throws: `SpotError(.unauthenticated)` when a token is given and not live.
    public func authenticate(token: String?) async throws -> User? {
        guard let token else { return nil }
        if looksLikeJWT(token) {
            guard let identities else {
                throw SpotError(.unauthenticated, "this server accepts no ID tokens (start it with --firebase-project or --auth-issuer); send a SpotStore token")
            }
            return try await signIn(try await identities.verify(token))
        }
        guard !token.isEmpty, let user = try await catalog.user(tokenDigest: Tokens.digest(of: token)) else {
            throw SpotError(.unauthenticated, "the token is not valid (it may have been revoked)")
        }
        return user
    }

    /// How often a user's last sign-in with an ID token is written down.
    static let signInRecordInterval: TimeInterval = 3600

    /// The user of a verified ID token, with its claims: recorded on first sight (and its
    /// last sign-in at most once an hour).
    /// - Throws: `.unauthenticated` when the user's tokens were revoked after it was issued.
    func signIn(_ identity: VerifiedIdentity) async throws -> User {
        let now = configuration.now()
        var user = try await catalog.user(uid: identity.uid)
        if user?.provider != identity.provider || user?.lastSignInAt.map({ now.timeIntervalSince($0) >= Self.signInRecordInterval }) != false {
            user = try await catalog.recordSignIn(uid: identity.uid, provider: identity.provider, at: now)
        }
        guard var user else { throw SpotError(.internal, "user '\(identity.uid)' was not recorded") }
        // `iat` has whole seconds: a token issued in the second of the revocation passes.
        if let revokedAt = user.revokedAt, identity.issuedAt < Date(timeIntervalSince1970: revokedAt.timeIntervalSince1970.rounded(.down)) {
            throw SpotError(.unauthenticated, "the ID token was issued before \(user.uid)'s tokens were revoked (\(revokedAt.formatted(.iso8601))); sign in again")
        }
        user.tokenClaims = identity.claims
        return user
    }

    /// Creates `uid` with `claims` and returns it with its first token, which is not stored anywhere.
    public func addUser(_ uid: String, claims: [String: String] = [:]) async throws -> (user: User, token: String) {
        try User.validate(uid: uid)
        for (key, value) in claims { try User.validate(claim: key, value: value) }
        let token = Tokens.generate()
        var user = try await catalog.addUser(uid, tokenDigest: Tokens.digest(of: token))
        if !claims.isEmpty { user = try await updateClaims(of: uid, claims) }
        return (user, token)
    }

    /// Sets claims of `uid` (a `nil` value removes one); the rules see them at once.
    public func updateClaims(of uid: String, _ changes: [String: String?]) async throws -> User {
        for (key, value) in changes { try User.validate(claim: key, value: value) }
        guard let user = try await catalog.updateClaims(of: uid, changes) else {
            throw SpotError(.notFound, "there is no user '\(uid)'")
        }
        return user
    }

    /// A new token for an existing user.
    public func issueToken(for uid: String) async throws -> String {
        let token = Tokens.generate()
        guard try await catalog.addToken(for: uid, tokenDigest: Tokens.digest(of: token)) else {
            throw SpotError(.notFound, "there is no user '\(uid)'")
        }
        return token
    }

    /// Makes every token of `uid` stop working at once; its objects stay.
    public func revokeTokens(of uid: String) async throws {
        guard try await catalog.revokeTokens(of: uid) else { throw SpotError(.notFound, "there is no user '\(uid)'") }
    }

    public func users() async throws -> [User] { try await catalog.users() }

    // MARK: Internals

    static func auth(_ user: User) -> Auth { Auth(uid: user.uid, claims: user.claims, tokenClaims: user.tokenClaims) }

    /// The object at `path` and its spot, once the policy allows `operation` on it.
    /// - Throws: the policy's refusal, or `.notFound` (only once the request is allowed,
    ///   so a refusal does not tell whether an object exists).
    func authorizedObject(_ operation: Access.Operation, at path: ObjectPath, for user: User?) async throws -> (StoredObject, SpotState?) {
        let spot = try await spotState(of: path)
        let existing = try await catalog.object(at: path)
        _ = try policy.authorize(AccessRequest(
            auth: user.map(Self.auth), operation: operation, bucket: path.bucket, name: path.name, spot: spot, resource: existing))
        guard let existing else { throw SpotError(.notFound, "there is no object \(path)") }
        return (existing, spot)
    }

    /// The object at `path` once the policy allows `user` to get it, with its spot and the
    /// damage marks of its blobs, all from one catalog read (`Catalog.objectForReading`).
    /// - Throws: as `authorizedObject(.get, …)`.
    func readableObject(at path: ObjectPath, for user: User?) async throws -> (StoredObject, SpotState?, [SpotCore.Digest: String]) {
        let reading = try await catalog.objectForReading(at: path)
        _ = try policy.authorize(AccessRequest(
            auth: user.map(Self.auth), operation: .get, bucket: path.bucket, name: path.name, spot: reading.spot, resource: reading.object))
        guard let object = reading.object else { throw SpotError(.notFound, "there is no object \(path)") }
        return (object, reading.spot, reading.damage)
    }

    func authorizeListing(bucket: String, prefix: String, for user: User?) throws {
        try ObjectPath.validate(bucket: bucket)
        _ = try policy.authorize(AccessRequest(auth: user.map(Self.auth), operation: .list, bucket: bucket, name: prefix))
    }

    func spotState(of path: ObjectPath) async throws -> SpotState? {
        guard let spotID = path.topFolder else { return nil }
        return try await catalog.spot(bucket: path.bucket, id: spotID)
    }
}

import Foundation
import SpotCore
import Testing

/// The `BrowserCatalog` clauses of `CatalogConformance`: sessions, sign-in links and share
/// links, seen from two connections.
extension CatalogConformance {
    static let browserClauses: [Clause] = [
        Clause(name: "aSessionLivesUntilItExpiresEndsOrItsUserIsRevoked") { try await $0.aSessionLivesUntilItExpiresEndsOrItsUserIsRevoked() },
        Clause(name: "aSignInLinkIsUsedOnceAcrossConnections") { try await $0.aSignInLinkIsUsedOnceAcrossConnections() },
        Clause(name: "aUserKeepsItsNewestSessionsOnly") { try await $0.aUserKeepsItsNewestSessionsOnly() },
        Clause(name: "secretsOfNoUserAreRefusedAndGoWithTheirUser") { try await $0.secretsOfNoUserAreRefusedAndGoWithTheirUser() },
        Clause(name: "aShareLinkLivesUntilItExpiresIsRevokedOrItsMakerIsRevoked") {
            try await $0.aShareLinkLivesUntilItExpiresIsRevokedOrItsMakerIsRevoked()
        },
    ]

    /// Now, in whole seconds: what each backend stores exactly (SQLite keeps milliseconds).
    static func wholeSecondNow() -> Date { Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)) }

    /// A session made on one connection is seen on the other until it expires (by the time
    /// given), is ended, or its user's tokens are revoked; one made after the revocation lives.
    func aSessionLivesUntilItExpiresEndsOrItsUserIsRevoked() async throws {
        let (first, second) = try await makeCatalogs()
        _ = try await first.addUser("alice", tokenDigest: Self.digest(1))
        let now = Self.wholeSecondNow()
        let (live, ended) = (Self.digest(2), Self.digest(3))
        #expect(try await first.addSession(live, of: "alice", createdAt: now, expiresAt: now + 3600))
        #expect(try await first.addSession(ended, of: "alice", createdAt: now, expiresAt: now + 3600))
        #expect(try await second.user(sessionDigest: live, at: now + 10)?.uid == "alice")
        #expect(try await second.user(sessionDigest: live, at: now + 3600) == nil, "expired")
        #expect(try await second.user(sessionDigest: Self.digest(4), at: now) == nil, "unknown")
        #expect(try await second.endSession(ended))
        #expect(try await first.user(sessionDigest: ended, at: now + 10) == nil, "ended")
        #expect(try await !second.endSession(ended), "ended twice")

        #expect(try await second.revokeTokens(of: "alice"))
        #expect(try await first.user(sessionDigest: live, at: now + 10) == nil, "made before the revocation")
        let later = Self.wholeSecondNow() + 1
        #expect(try await first.addSession(Self.digest(5), of: "alice", createdAt: later, expiresAt: later + 3600))
        #expect(try await second.user(sessionDigest: Self.digest(5), at: later + 10)?.uid == "alice", "made after the revocation")
    }

    /// Past `maxSessionsPerUser`, a new session ends the user's oldest.
    func aUserKeepsItsNewestSessionsOnly() async throws {
        let (first, second) = try await makeCatalogs()
        _ = try await first.addUser("alice", tokenDigest: Self.digest(1))
        let now = Self.wholeSecondNow()
        for index in 0...maxSessionsPerUser {
            let catalog = index.isMultiple(of: 2) ? first : second
            #expect(try await catalog.addSession(Self.digest(100 + index), of: "alice", createdAt: now + Double(index), expiresAt: now + 86400))
        }
        let later = now + Double(maxSessionsPerUser) + 1
        #expect(try await first.user(sessionDigest: Self.digest(100), at: later) == nil, "the oldest ended")
        for index in 1...maxSessionsPerUser {
            #expect(try await second.user(sessionDigest: Self.digest(100 + index), at: later)?.uid == "alice", "session \(index)")
        }
    }

    /// Of eight uses of one link at once through two connections, exactly one gets its uid;
    /// an expired link, or one made before its user's revocation, gives none.
    func aSignInLinkIsUsedOnceAcrossConnections() async throws {
        let (first, second) = try await makeCatalogs()
        _ = try await first.addUser("alice", tokenDigest: Self.digest(1))
        let now = Self.wholeSecondNow()
        #expect(try await first.addSignInLink(Self.digest(2), for: "alice", createdAt: now, expiresAt: now + 300))
        let uids = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<8 {
                let catalog = index.isMultiple(of: 2) ? first : second
                group.addTask { try await catalog.useSignInLink(Self.digest(2), at: now + 1) }
            }
            return try await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(uids.compactMap { $0 } == ["alice"])

        #expect(try await first.addSignInLink(Self.digest(3), for: "alice", createdAt: now, expiresAt: now + 300))
        #expect(try await second.useSignInLink(Self.digest(3), at: now + 300) == nil, "expired")
        #expect(try await first.useSignInLink(Self.digest(3), at: now + 1) == nil, "an expired link is gone once tried")

        #expect(try await first.addSignInLink(Self.digest(4), for: "alice", createdAt: now, expiresAt: now + 300))
        #expect(try await second.revokeTokens(of: "alice"))
        #expect(try await first.useSignInLink(Self.digest(4), at: now + 1) == nil, "made before its user's revocation")
    }

    /// Sessions, links and share links of a uid that is no user are refused; a user's are
    /// gone with it, and a user made again with its uid gets none of them.
    func secretsOfNoUserAreRefusedAndGoWithTheirUser() async throws {
        let (first, second) = try await makeCatalogs()
        let now = Self.wholeSecondNow()
        #expect(try await !first.addSession(Self.digest(2), of: "nobody", createdAt: now, expiresAt: now + 60))
        #expect(try await !first.addSignInLink(Self.digest(3), for: "nobody", createdAt: now, expiresAt: now + 60))
        let share = SpotShare(id: SpotShare.id(of: Self.digest(4)), bucket: "spots", spotId: "s1", createdBy: "nobody", createdAt: now, expiresAt: now + 60)
        #expect(try await !first.addSpotShare(share, digest: Self.digest(4)))

        _ = try await first.addUser("alice", tokenDigest: Self.digest(1))
        #expect(try await first.addSession(Self.digest(2), of: "alice", createdAt: now, expiresAt: now + 60))
        #expect(try await first.addSignInLink(Self.digest(3), for: "alice", createdAt: now, expiresAt: now + 60))
        var alices = share
        alices.createdBy = "alice"
        #expect(try await first.addSpotShare(alices, digest: Self.digest(4)))
        #expect(try await second.deleteUser("alice"))
        _ = try await second.addUser("alice", tokenDigest: Self.digest(5))
        #expect(try await first.user(sessionDigest: Self.digest(2), at: now + 1) == nil)
        #expect(try await first.useSignInLink(Self.digest(3), at: now + 1) == nil)
        #expect(try await first.spotShare(digest: Self.digest(4), at: now + 1) == nil)
    }

    /// A share link made on one connection is found by its secret on the other and listed
    /// with its spot until it expires, is revoked by its id, or its maker's tokens are revoked.
    func aShareLinkLivesUntilItExpiresIsRevokedOrItsMakerIsRevoked() async throws {
        let (first, second) = try await makeCatalogs()
        _ = try await first.addUser("alice", tokenDigest: Self.digest(1))
        let now = Self.wholeSecondNow()
        func share(_ seed: Int, spot: String = "s1", lasting seconds: TimeInterval = 3600) -> SpotShare {
            SpotShare(id: SpotShare.id(of: Self.digest(seed)), bucket: "spots", spotId: spot, createdBy: "alice", createdAt: now, expiresAt: now + seconds)
        }
        for (seed, spot, seconds) in [(2, "s1", 3600.0), (3, "s1", 60), (4, "s2", 3600)] {
            #expect(try await first.addSpotShare(share(seed, spot: spot, lasting: seconds), digest: Self.digest(seed)))
        }
        #expect(try await second.spotShare(digest: Self.digest(2), at: now + 1) == share(2))
        #expect(try await second.spotShares(bucket: "spots", spotId: "s1", at: now + 1).map(\.id).sorted() == [share(2).id, share(3).id].sorted())
        #expect(try await second.spotShares(bucket: "spots", spotId: "s1", at: now + 60).map(\.id) == [share(2).id], "one expired")
        #expect(try await second.spotShare(digest: Self.digest(3), at: now + 60) == nil, "expired")

        #expect(try await !second.revokeSpotShare(share(2).id, bucket: "spots", spotId: "s2"), "another spot's id")
        #expect(try await !second.revokeSpotShare("'; DROP TABLE spot_shares; --", bucket: "spots", spotId: "s1"))
        #expect(try await second.revokeSpotShare(share(2).id, bucket: "spots", spotId: "s1"))
        #expect(try await first.spotShare(digest: Self.digest(2), at: now + 1) == nil, "revoked")

        #expect(try await first.spotShare(digest: Self.digest(4), at: now + 1) != nil)
        #expect(try await second.revokeTokens(of: "alice"))
        #expect(try await first.spotShare(digest: Self.digest(4), at: now + 1) == nil, "its maker was revoked")
        #expect(try await first.spotShares(bucket: "spots", spotId: "s2", at: now + 1).isEmpty)
    }
}

import Foundation
import SpotCore
import Testing

/// The `Catalog` contract for users and tokens, run against every backend.
@Suite struct CatalogUserTests {
    @Test(arguments: CatalogBackend.allCases)
    func addedUserIsFoundByTokenDigest(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let before = Date()
            let alice = try await catalog.addUser("alice", tokenDigest: digest(1))
            #expect(alice.uid == "alice")
            #expect(alice.tokenCount == 1)
            #expect(isBetween(alice.createdAt, before, Date()))
            #expect(try await catalog.user(tokenDigest: digest(1)) == alice)
            #expect(try await catalog.user(tokenDigest: digest(2)) == nil)
            #expect(try await catalog.users() == [alice])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func addingAnExistingUidIsAConflictAndWritesNothing(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let alice = try await catalog.addUser("alice", tokenDigest: digest(1))
            let error = await #expect(throws: SpotError.self) {
                try await catalog.addUser("alice", tokenDigest: digest(2))
            }
            #expect(error?.kind == .conflict)
            #expect(error?.message.contains("alice") == true)
            #expect(try await catalog.user(tokenDigest: digest(2)) == nil)
            #expect(try await catalog.users() == [alice])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aTokenDigestBelongsToOneUser(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let alice = try await catalog.addUser("alice", tokenDigest: digest(1))
            let error = await #expect(throws: SpotError.self) {
                try await catalog.addUser("bob", tokenDigest: digest(1))
            }
            #expect(error?.kind == .conflict)
            #expect(error?.message == "that token is already in use")
            #expect(try await catalog.users() == [alice])
            #expect(try await catalog.user(tokenDigest: digest(1))?.uid == "alice")
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func addTokenGivesAnExistingUserAnotherToken(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.addUser("alice", tokenDigest: digest(1))
            #expect(try await catalog.addToken(for: "alice", tokenDigest: digest(2)))
            #expect(try await catalog.user(tokenDigest: digest(1))?.tokenCount == 2)
            #expect(try await catalog.user(tokenDigest: digest(2))?.uid == "alice")

            #expect(try await catalog.addToken(for: "nobody", tokenDigest: digest(3)) == false)
            #expect(try await catalog.user(tokenDigest: digest(3)) == nil)

            let error = await #expect(throws: SpotError.self) {
                try await catalog.addToken(for: "alice", tokenDigest: digest(2))
            }
            #expect(error?.kind == .conflict)
            #expect(error?.message == "that token is already in use")
            #expect(try await catalog.user(tokenDigest: digest(2))?.tokenCount == 2)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func claimsAreSetReplacedAndRemoved(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.addUser("alice", tokenDigest: digest(1))
            _ = try await catalog.addUser("bob", tokenDigest: digest(2))
            let set = try await catalog.updateClaims(of: "alice", ["admin": "true", "team": "blue"])
            #expect(set?.claims == ["admin": "true", "team": "blue"])
            let changed = try await catalog.updateClaims(of: "alice", ["admin": nil, "team": "red", "level": "3"])
            #expect(changed?.claims == ["team": "red", "level": "3"])
            // Tokens carry the claims; other users have none.
            #expect(try await catalog.user(tokenDigest: digest(1))?.claims == ["team": "red", "level": "3"])
            #expect(try await catalog.user(tokenDigest: digest(2))?.claims == [:])
            #expect(try await catalog.users().map(\.claims) == [["team": "red", "level": "3"], [:]])
            #expect(try await catalog.updateClaims(of: "nobody", ["admin": "true"]) == nil)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func usersAreListedByUid(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            for (seed, uid) in ["carol", "alice", "Bob", "bob-2"].enumerated() {
                _ = try await catalog.addUser(uid, tokenDigest: digest(seed))
            }
            _ = try await catalog.addToken(for: "carol", tokenDigest: digest(10))
            let users = try await catalog.users()
            #expect(users.map(\.uid) == ["Bob", "alice", "bob-2", "carol"])
            #expect(users.map(\.tokenCount) == [1, 1, 1, 2])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func revokingTokensKeepsTheUserAndItsObjects(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.addUser("alice", tokenDigest: digest(1))
            _ = try await catalog.addToken(for: "alice", tokenDigest: digest(2))
            _ = try await catalog.addUser("bob", tokenDigest: digest(3))
            let photo = try await catalog.commit(upload("eiffel/1.jpg", by: "alice"), admission: SpotAdmission(maxObjects: 4))

            #expect(try await catalog.revokeTokens(of: "alice"))
            #expect(try await catalog.user(tokenDigest: digest(1)) == nil)
            #expect(try await catalog.user(tokenDigest: digest(2)) == nil)
            #expect(try await catalog.user(tokenDigest: digest(3))?.uid == "bob")
            #expect(try await catalog.users().map(\.tokenCount) == [0, 1])
            #expect(try await catalog.object(at: photo.path) == photo)
            #expect(try await catalog.spot(bucket: "spots", id: "eiffel")?.owner == "alice")

            #expect(try await catalog.revokeTokens(of: "nobody") == false)
            #expect(try await catalog.addToken(for: "alice", tokenDigest: digest(4)))
            #expect(try await catalog.user(tokenDigest: digest(4))?.tokenCount == 1)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func signInsRecordTheUserOnceAndRevocationIsDated(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            #expect(try await catalog.user(uid: "auth0|gina") == nil)
            let first = Date(timeIntervalSince1970: 1_800_000_000)
            let gina = try await catalog.recordSignIn(uid: "auth0|gina", provider: "auth0", at: first)
            #expect(gina.uid == "auth0|gina" && gina.tokenCount == 0 && gina.provider == "auth0")
            #expect(abs(gina.createdAt.timeIntervalSince(first)) < 0.01 && gina.lastSignInAt == gina.createdAt && gina.revokedAt == nil)
            #expect(try await catalog.user(uid: "auth0|gina") == gina)

            let later = first.addingTimeInterval(7200)
            _ = try await catalog.updateClaims(of: "auth0|gina", ["team": "blue"])
            let again = try await catalog.recordSignIn(uid: "auth0|gina", provider: "firebase:spots", at: later)
            #expect(again.createdAt == gina.createdAt, "the first sign-in stays the creation")
            #expect(again.provider == "firebase:spots" && abs((again.lastSignInAt ?? first).timeIntervalSince(later)) < 0.01)
            #expect(again.claims == ["team": "blue"])

            let before = Date()
            #expect(try await catalog.revokeTokens(of: "auth0|gina"))
            let revoked = try #require(try await catalog.user(uid: "auth0|gina"))
            #expect(isBetween(try #require(revoked.revokedAt), before, Date()))
            #expect(try await catalog.users().map(\.uid) == ["auth0|gina"])
            #expect(try await catalog.users().first == revoked)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func usersArePagedTheAdminRoleIsSetAndUsersAreDeleted(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            for (seed, uid) in ["dora", "ann", "cleo", "bea"].enumerated() {
                _ = try await catalog.addUser(uid, tokenDigest: digest(seed + 1))
            }
            _ = try await catalog.updateClaims(of: "cleo", ["team": "red"])
            #expect(try await catalog.users(after: nil, limit: 2).map(\.uid) == ["ann", "bea"])
            let next = try await catalog.users(after: "bea", limit: 2)
            #expect(next.map(\.uid) == ["cleo", "dora"] && next[0].claims == ["team": "red"])
            #expect(try await catalog.users(after: "dora", limit: 2).isEmpty)

            #expect(try await catalog.setAdmin(of: "ann", true)?.isAdmin == true)
            #expect(try await catalog.user(tokenDigest: digest(2))?.isAdmin == true)
            #expect(try await catalog.setAdmin(of: "ann", false)?.isAdmin == false)
            #expect(try await catalog.setAdmin(of: "nobody", true) == nil)

            _ = try await catalog.commit(upload("dora/1.jpg", by: "dora", seed: 9), admission: SpotAdmission())
            for (id, owner) in [("s-dora", "dora"), ("s-ann", "ann")] {
                try await catalog.startUpload(UploadSession(
                    id: id, path: path("\(owner)/2.jpg"), owner: owner, declaredSize: nil, admission: SpotAdmission(), terms: "{}",
                    createdAt: Date(), expiresAt: Date().addingTimeInterval(3600)), now: Date())
            }
            #expect(try await catalog.deleteUser("dora"))
            #expect(try await catalog.uploadSession("s-dora") == nil, "a user of the same uid made later cannot finish it")
            #expect(try await catalog.uploadSession("s-ann") != nil)
            #expect(try await !catalog.deleteUser("dora"))
            #expect(try await catalog.user(tokenDigest: digest(1)) == nil, "its tokens went with it")
            #expect(try await catalog.object(at: path("dora/1.jpg"))?.owner == "dora", "its objects stay")
            #expect(try await catalog.statistics().objectsOfDeletedUsers == 1)
        }
    }
}
